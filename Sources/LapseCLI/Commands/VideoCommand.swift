// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum VideoCommand: Command {
    static let name = "video"
    static let summary = "Turn still images into an MP4/MOV video that plays everywhere"
    static let help = """
        lapse video [options] INPUT... -o OUTPUT

        Turns still images into an H.264 (or HEVC) video: yuv420p, BT.709, moov first, plays everywhere.
        EXIF orientation is applied; transparent pixels are composited over the background colour.

        Inputs:
          INPUT                   image files (JPEG, PNG, WebP, …), directories (natural order: img2 before img10),
                                  or @list.txt (one path a line, optionally 'path<TAB>seconds')
        Options:
          -o, --output FILE       .mp4, .m4v or .mov
          --image-duration S      seconds each image is shown (default 1.0)
          --duration S            with a single image: the video's length in seconds
          --fps N                 frames per second, 1–240: 25, 29.97, 30000/1001 (default 30)
          --size WxH              frame size (default: the first image's displayed size, rounded down to even,
                                  scaled down to 4096 on a side and 4096x2176's pixels if larger)
          --fit MODE              contain | cover | stretch (default contain)
          --background #RRGGBB    padding and transparency colour (default #000000)
          --codec NAME            h264 | hevc (default h264)
          --crf N                 quality 0–51, lower is better (default 20)
          --preset NAME           ultrafast … veryslow (default medium)
          --audio FILE            add the file's audio as AAC, cut to the video's length
          --skip-invalid          skip images that cannot be read, with a warning
          -y, --overwrite         replace OUTPUT if it exists
          --quiet, --json         no progress / a JSON summary on stdout

        Examples:
          lapse video photos/ -o slideshow.mp4
          lapse video cover.png --duration 5 -o intro.mp4
          lapse video @shots.txt --size 1920x1080 --fit cover --fps 25 -o shots.mov
        """

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let out = try OutputOptions(&arguments)
        let output = try out.required("OUT.mp4")
        let imageDuration = try arguments.double("--image-duration", in: ImageInput.durationRange)
        let duration = try arguments.double("--duration", in: 0.001...86400)
        let frameRate = try arguments.frameRate("--fps", in: 1...240) ?? FrameRate(30)
        let size = try arguments.size("--size")
        let fit =
            try arguments.choice("--fit", FitMode.allCases.map(\.rawValue)).flatMap(FitMode.init(rawValue:)) ?? .contain
        let backgroundText = try arguments.value("--background")
        let codec =
            try arguments.choice("--codec", ["h264", "hevc"]).flatMap(VideoEncoderSettings.Codec.init(rawValue:))
            ?? .h264
        let encoder = try EncoderOptions(&arguments)
        let crf = encoder.crf ?? 20, preset = encoder.preset ?? "medium"
        let audio = try arguments.value("--audio")
        let skipInvalid = arguments.flag("--skip-invalid")
        let overwrite = out.overwrite
        let inputs = try arguments.positionals()
        guard !inputs.isEmpty else { throw LapseError.usage("no input images") }
        var background = RGBA(0, 0, 0)
        if let backgroundText {
            guard let c = RGBA(hex: backgroundText) else {
                throw LapseError.usage("--background takes #RRGGBB, not '\(backgroundText)'")
            }
            background = c
        }
        _ = try VideoJob.container(for: output)
        if duration != nil && imageDuration != nil {
            throw LapseError.usage("give --duration (one image) or --image-duration (each image), not both")
        }

        let images = try ImageInputs.expand(inputs)
        var job = VideoJob(inputs: images, output: output)
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
        job.audio = audio
        job.skipInvalid = skipInvalid
        job.overwrite = overwrite

        let started = Date()
        let summary = try await job.run(progress: console.progress, warning: console.warning)
        let seconds = Date().timeIntervalSince(started)
        console.summary(
            [
                """
                wrote \(summary.output): \(summary.width)x\(summary.height), \(counted(summary.frames, "frame")) \
                at \(summary.frameRate) fps, 
                """
                    + String(format: "%.2f", summary.duration) + " s, \(formatBytes(summary.bytes))",
                counted(summary.images, "image") + (summary.skipped > 0 ? ", \(summary.skipped) skipped" : "")
                    + " in " + String(format: "%.1f", seconds) + " s"
            ],
            json: Summary.Video(
                output: summary.output, width: summary.width, height: summary.height, frames: summary.frames,
                fps: summary.frameRate.value,
                frameRate: "\(summary.frameRate.numerator)/\(summary.frameRate.denominator)",
                duration: summary.duration, bytes: summary.bytes, images: summary.images, skipped: summary.skipped,
                seconds: seconds))
    }
}
