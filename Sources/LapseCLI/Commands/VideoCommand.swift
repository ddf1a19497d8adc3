// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum VideoCommand: Command {
    static let name = "video"
    static let summary = "Turn still images into an MP4/MOV video that plays everywhere"
    static let imageDuration = Option("--image-duration", value: "S", help: "seconds each image is shown (default 1.0)")
    static let duration = Option("--duration", value: "S", help: "with a single image: the video's length in seconds")
    static let fps = Option("--fps", value: "N", help: "frames per second, 1–240: 25, 29.97, 30000/1001 (default 30)")
    static let size = ViewOptions.size.described(
        """
        frame size (default: the first image's displayed size, rounded down to even, scaled down to 4096 on a side \
        and 4096x2176's pixels if larger)
        """)
    static let fit = Option("--fit", value: "MODE", help: "contain | cover | stretch (default contain)")
    static let background = Option(
        "--background", value: "#RRGGBB", help: "padding and transparency colour (default #000000)")
    static let codec = Option("--codec", value: "NAME", help: "h264 | hevc (default h264)")
    static let audio = Option("--audio", value: "FILE", help: "add the file's audio as AAC, cut to the video's length")
    static let skipInvalid = Option("--skip-invalid", help: "skip images that cannot be read, with a warning")

    static let page = CommandHelp(
        usage: "lapse video [options] INPUT... -o OUTPUT",
        about: """
            Turns still images into an H.264 (or HEVC) video: yuv420p, BT.709, moov first, plays everywhere.
            EXIF orientation is applied; transparent pixels are composited over the background colour.
            """,
        sections: [
            HelpSection(
                "Inputs",
                rows: [
                    .text(
                        "INPUT",
                        """
                        image files (JPEG, PNG, WebP, …), directories (natural order: img2 before img10), or @list.txt \
                        (one path a line, optionally 'path<TAB>seconds')
                        """)
                ]),
            HelpSection(
                "Options",
                [
                    OutputOptions.output.described(".mp4, .m4v or .mov"), imageDuration, duration, fps, size, fit,
                    background, codec, EncoderOptions.crf, EncoderOptions.preset, audio, skipInvalid,
                    OutputOptions.overwrite
                ], more: [GlobalOptions.row(progress: true)])
        ],
        examples: [
            "lapse video photos/ -o slideshow.mp4",
            "lapse video cover.png --duration 5 -o intro.mp4",
            "lapse video @shots.txt --size 1920x1080 --fit cover --fps 25 -o shots.mov"
        ])

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let out = try OutputOptions(&arguments)
        let imageDuration = try arguments.double(Self.imageDuration, in: ImageInput.durationRange)
        let duration = try arguments.double(Self.duration, in: 0.001...86400)
        let frameRate = try arguments.frameRate(Self.fps, in: 1...240) ?? FrameRate(30)
        let size = try arguments.size(Self.size)
        let fit =
            try arguments.choice(Self.fit, FitMode.allCases.map(\.rawValue)).flatMap(FitMode.init(rawValue:))
            ?? .contain
        let backgroundText = try arguments.value(Self.background)
        let codec =
            try arguments.choice(Self.codec, ["h264", "hevc"]).flatMap(VideoEncoderSettings.Codec.init(rawValue:))
            ?? .h264
        let encoder = try EncoderOptions(&arguments)
        let crf = encoder.crf ?? 20
        let preset = encoder.preset ?? .medium
        let audio = try arguments.value(Self.audio)
        let skipInvalid = arguments.flag(Self.skipInvalid)
        let overwrite = out.overwrite
        let inputs = try arguments.positionals()
        let output = try out.required("OUT.mp4")
        guard !inputs.isEmpty else { throw LapseError.usage("no input images") }
        var background = RGBA(0, 0, 0)
        if let backgroundText {
            guard let c = RGBA(hex: backgroundText) else {
                throw LapseError.usage("--background takes #RRGGBB, not '\(backgroundText)'")
            }
            background = c
        }
        let outputFile = URL(fileURLWithPath: output)
        _ = try VideoJob.container(for: outputFile)
        if duration != nil && imageDuration != nil {
            throw LapseError.usage("give --duration (one image) or --image-duration (each image), not both")
        }

        let images = try ImageInputs.expand(inputs)
        var job = VideoJob(inputs: images, output: outputFile)
        if let duration {
            guard images.count == 1 else {
                throw LapseError.usage("--duration is for a single image; use --image-duration for several")
            }
            job.imageDuration = duration
        } else if let imageDuration {
            job.imageDuration = imageDuration
        }
        job.frameRate = frameRate
        job.size = size.map { ($0.width, $0.height) }
        job.fit = fit
        job.background = background
        job.codec = codec
        job.crf = crf
        job.preset = preset
        job.audio = audio.map { URL(location: $0) }
        job.skipInvalid = skipInvalid
        job.overwrite = overwrite

        let started = Date()
        let summary = try await job.run(progress: console.progress, warning: console.warning)
        let seconds = Date().timeIntervalSince(started)
        console.summary(
            [
                """
                wrote \(summary.output.shown): \(summary.width)x\(summary.height), \(counted(summary.frames, "frame")) \
                at \(summary.frameRate) fps, 
                """
                    + String(format: "%.2f", summary.duration) + " s, \(formatBytes(summary.bytes))",
                counted(summary.images, "image") + (summary.skipped > 0 ? ", \(summary.skipped) skipped" : "")
                    + " in " + String(format: "%.1f", seconds) + " s"
            ],
            json: CommandSummary(summary, seconds: seconds))
    }
}
