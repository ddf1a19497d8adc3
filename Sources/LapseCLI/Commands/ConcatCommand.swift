// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum ConcatCommand: Command {
    static let name = "concat"
    static let summary = "Join videos (a hyperlapse's segments) end to end without re-encoding"
    static let gif = HyperlapseCommand.gif.described(
        "a GIF of the joined video as well (at the video's frame rate, at most 50 fps)")
    static let gifWidth = HyperlapseCommand.gifWidth.described("the GIF's width (default a third of the video's)")

    static let page = CommandHelp(
        usage: "lapse concat A.mp4 B.mp4 [C.mp4 ...] -o OUT.mp4 [--gif OUT.gif [--gif-width W]] [--overwrite]",
        about: """
            Joins videos in the order given by stream copy (nothing is re-encoded): the parts of a hyperlapse rendered
            with 'lapse hyperlapse --segment K/N', or any videos made with the same encoder settings. The inputs must
            have the same streams and codec parameters (codec, profile, size, pixel format, the encoder's settings);
            otherwise the first that differs is named and nothing is written. Timestamps run on from 0 without a gap,
            MP4/MOV get +faststart (the index first), the credits of every input go into the output's metadata once,
            and the inputs' IN.credits.txt files (when each has one) into OUT.credits.txt.
            """,
        sections: [
            HelpSection(
                "Options",
                [
                    OutputOptions.output.described(
                        "the joined video (.mp4, .m4v, .mov, .mkv; required)", value: "OUT.mp4"),
                    gif, gifWidth, OutputOptions.overwrite.described("replace outputs that exist")
                ], more: [GlobalOptions.row(progress: true)])
        ],
        examples: [
            "lapse concat part-1.mp4 part-2.mp4 part-3.mp4 -o route.mp4 --gif route.gif",
            "lapse concat $(ls parts/*.mp4 | sort -V) -o route.mp4"
        ])

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let out = try OutputOptions(&arguments)
        let gif = try arguments.value(Self.gif)
        let gifWidth = try arguments.int(Self.gifWidth, in: 16...4096)
        let overwrite = out.overwrite
        let inputs = try arguments.positionals()
        let output = try out.required("OUT.mp4")
        guard inputs.count >= 2 else {
            throw LapseError.usage(
                inputs.isEmpty ? "give the videos to join" : "give at least two videos to join, not one")
        }
        if gifWidth != nil && gif == nil { throw LapseError.usage("--gif-width needs --gif OUT.gif") }
        MediaInput.silenceLibraryLog()
        var job = ConcatJob(inputs: inputs.map { URL(location: $0) }, output: URL(fileURLWithPath: output))
        job.gif = gif.map { URL(fileURLWithPath: $0) }
        job.gifWidth = gifWidth
        job.overwrite = overwrite
        let started = Date()
        let s = try await job.run(progress: console.progress, warning: console.warning)
        var lines = [
            "wrote \(s.output.shown): \(counted(inputs.count, "video")) joined, \(counted(s.frames, "frame")), "
                + String(format: "%.3f", s.duration) + " s, \(formatBytes(s.bytes))"
        ]
        if let g = s.gif {
            lines.append(
                "wrote \(g.url.shown): \(g.width)x\(g.height), \(counted(g.frameCount, "frame")), "
                    + formatBytes(g.bytes)
            )
        }
        if let credits = s.credits { lines.append("credits in \(credits.shown)") }
        lines.append("done in " + String(format: "%.1f", Date().timeIntervalSince(started)) + " s")
        console.summary(
            lines,
            json: s)
    }
}
