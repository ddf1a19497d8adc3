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

    static let output = Option("-o", "--output", value: "FILE", setting: "output", help: "the file to write")
    static let overwrite = Option("-y", "--overwrite", setting: "overwrite", help: "replace OUTPUT if it exists")

    /// - Parameters:
    ///   - arguments: the command line, from which both options are taken.
    ///   - output: the output option as this command declares it (``output``, or that under more names:
    ///     `lapse panoramas`' `--out`).
    /// - Throws: ``LapseError`` `.usage` when `-o` has no value.
    init(_ arguments: inout Arguments, output: Option = Self.output) throws {
        path = try arguments.value(output).map { ($0 as NSString).expandingTildeInPath }
        overwrite = arguments.flag(Self.overwrite)
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
    static let timeout = Option(
        "--timeout", value: "SECONDS", setting: "timeout",
        help: "give up on an HTTP request after this long, retries included (default: 30 s an attempt)")

    init(_ arguments: inout Arguments) throws {
        timeout = try arguments.double(Self.timeout, in: Self.range)
    }
}

/// `--crf N` (0 to 51) and `--preset NAME` (an x264 preset).
struct EncoderOptions {
    var crf: Double?
    var preset: EncoderPreset?

    static let crf = Option("--crf", value: "N", setting: "crf", help: "quality 0–51, lower is better (default 20)")
    static let preset = Option("--preset", value: "NAME", help: "ultrafast … veryslow (default medium)")

    init(_ arguments: inout Arguments) throws {
        crf = try arguments.double(Self.crf, in: 0...51)
        preset = try arguments.choice(Self.preset, EncoderPreset.names).flatMap(EncoderPreset.init(rawValue:))
    }
}

/// `--size WxH` and `--fov D` (1 to 179 degrees: a perspective view narrower than a half-turn) of a rendered view.
struct ViewOptions {
    var size: FrameSize?
    var fov: Double?

    static let size = Option("--size", value: "WxH", setting: "size", help: "output size in pixels (default 1280x720)")
    static let fov = Option(
        "--fov", value: "D", setting: "fov", help: "horizontal field of view in degrees, 1 to 179 (default 90)")

    init(_ arguments: inout Arguments) throws {
        size = try arguments.size(Self.size)
        fov = try arguments.double(Self.fov, in: HyperlapseSettings.fovRange)
    }
}
