// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

// The options several commands share, each declared once here: its names, its range and its error, so that
// `-o`, `-y`, `--timeout`, `--crf`, `--preset`, `--size` and `--fov` mean the same in every command.

/// `-o/--output PATH` and `-y/--overwrite`.
struct OutputOptions {
    /// The output given (the last of its names), tilde-expanded; nil when none was.
    var path: String?
    var overwrite: Bool

    /// - Parameter aliases: further names of the output in this command (`lapse panoramas`' `--out`).
    init(_ arguments: inout Arguments, aliases: [String] = []) throws {
        path = try arguments.value(["-o", "--output"] + aliases).map(PanoramaSourceOptions.expand)
        overwrite = arguments.flag("-y", "--overwrite")
    }

    /// The output, or a usage error: "no output (-o WHAT)".
    func required(_ what: String) throws -> String {
        guard let path else { throw LapseError.usage("no output (-o \(what))") }
        return path
    }
}

/// `--timeout SECONDS` (0.1 to 3600): how long a network read may wait. An HTTP request (a route, panorama
/// metadata, a tile) gives up this long after it was first sent, its retries included; a video read over the
/// network gives up after this long without progress (4 kB or a packet), however often it reconnects, plus one
/// reconnection's delay (at most 4 s).
struct NetworkOptions {
    var timeout: Double?

    static let range = HyperlapseSettings.timeoutRange

    init(_ arguments: inout Arguments) throws {
        timeout = try arguments.double("--timeout", in: Self.range)
    }
}

/// `--crf N` (0 to 51) and `--preset NAME` (an x264 preset).
struct EncoderOptions {
    var crf: Double?
    var preset: String?

    init(_ arguments: inout Arguments) throws {
        crf = try arguments.double("--crf", in: 0...51)
        preset = try arguments.choice("--preset", VideoEncoderSettings.presets)
    }
}

/// `--size WxH` and `--fov D` (1 to 179 degrees: a perspective view narrower than a half-turn) of a rendered view.
struct ViewOptions {
    var size: FrameSize?
    var fov: Double?

    init(_ arguments: inout Arguments) throws {
        size = try arguments.size("--size")
        fov = try arguments.double("--fov", in: HyperlapseSettings.fovRange)
    }
}
