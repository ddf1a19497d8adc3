// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum GIFCommand: Command {
    static let name = "gif"
    static let summary = "Make a high-quality animated GIF from a video (local or online) or from images"
    static let start = Option(
        "--start", value: "T", setting: "start", help: "video: start at T (seconds, or [HH:]MM:SS[.mmm]); default 0")
    static let end = Option("--end", value: "T", setting: "end", help: "video: stop at T")
    static let duration = Option(
        "--duration", value: "T", setting: "duration",
        help: "video: length from --start (instead of --end); default: to the end")
    static let fps = Option(
        "--fps", value: "N", help: "video: frames per second, up to 50 (default 10; 12.5, 30000/1001 too)")
    static let delay = Option(
        "--delay", value: "S", setting: "delay", help: "images: seconds each image is shown (default 1/fps = 0.1)")
    static let width = Option("--width", value: "W", help: "width in pixels, height from the aspect ratio")
    static let height = Option("--height", value: "H", help: "height in pixels, width from the aspect ratio")
    static let upscale = Option(
        "--upscale",
        help: """
            allow a GIF more than 2× the video's width or height (refused otherwise: every frame upscaled, a much \
            larger file and no sharper)
            """)
    static let scale = Option(
        "--scale", value: "auto|F",
        help:
            """
            auto (default): longer side ≥ 1200 → ×0.2, ≥ 800 → ×0.3, ≥ 400 → ×0.5, else ×0.7; or a factor F such \
            as 0.5
            """
    )
    static let loop = Option("--loop", value: "N", help: "play N more times after the first (0 = forever, the default)")
    static let noLoop = Option("--no-loop", help: "play once (no loop extension)")
    static let quality = Option("--quality", value: "Q", help: "palette quality 1–100 (default 90)")
    static let dither = Option("--dither", value: "D", help: "dithering 0 (none) to 1 (full, the default)")
    static let palette = Option(
        "--palette", value: "MODE", help: "per-frame (default) or global (one palette for all frames)")
    static let fast = Option("--fast", help: "faster, slightly lower quality")

    static let page = CommandHelp(
        usage: """
            lapse gif INPUT... -o OUT.gif [--start T] [--end T | --duration T] [--fps N]
                      [--width W | --height H | --scale auto|F] [--loop N | --no-loop] [--quality 1-100]
                      [--dither 0-1] [--palette per-frame|global] [--fast] [--upscale] [--delay S] [--overwrite]
            """,
        about: """
            Makes an animated GIF (GIF89a) from one video — a file, an http(s) URL or an HLS playlist — or from
            several still images. Frames are taken by presentation time (frame i shows the video at START + i/FPS,
            so variable-frame-rate video keeps its speed); rotation from phone videos, non-square pixels, HDR (tone-
            mapped to SDR) and transparency are handled. Colours come from libimagequant (a palette per frame by
            default), with dithering; pixels that do not change are left transparent and frames are cropped, so
            files stay small.
            """,
        sections: [
            HelpSection(
                "Inputs",
                rows: [
                    .text(
                        "INPUT",
                        """
                        one video (path or URL), or images: files, directories (natural order: img2 before img10) or \
                        @list.txt (one path a line, optionally 'path<TAB>seconds')
                        """)
                ]),
            HelpSection(
                "Options",
                [
                    OutputOptions.output.described("the GIF to write"), start, end, duration, fps, delay, width, height,
                    upscale, scale, loop, noLoop, quality, dither, palette, fast, ClipCommand.timeout,
                    OutputOptions.overwrite.described("replace OUT.gif if it exists")
                ], more: [GlobalOptions.row(progress: true)])
        ],
        examples: [
            "lapse gif clip.mov -o clip.gif",
            "lapse gif https://example.com/video.mp4 --start 1:05 --duration 3 --width 480 -o moment.gif",
            "lapse gif iphone.mov --fps 15 --scale 0.5 --no-loop -o once.gif",
            "lapse gif frames/ --delay 0.05 -o animation.gif"
        ])

    static let videoExtensions: Set<String> = [
        "mp4", "m4v", "mov", "mkv", "webm", "avi", "ts", "m2ts", "mts", "m3u8",
        "flv", "wmv", "mpg", "mpeg", "3gp", "ogv", "gif"
    ]

    /// Whether `path`, a local file named as neither a video nor an image (`.insv`, `.vid`, no extension: many
    /// downloads), holds moving pictures as FFmpeg reads it (a video stream, not a still image's demuxer).
    static func holdsVideo(_ path: String) -> Bool {
        guard !path.hasPrefix("@"), !ImageInputs.imageExtensions.contains((path as NSString).pathExtension.lowercased())
        else { return false }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
            let input = try? MediaInput(location: URL(fileURLWithPath: path))
        else { return false }
        return !input.isStillImage && input.videoStream != nil
    }

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let out = try OutputOptions(&arguments)
        let start = try arguments.time(Self.start)
        let end = try arguments.time(Self.end)
        let duration = try arguments.time(Self.duration)
        let frameRate = try arguments.frameRate(Self.fps, in: 0.1...50)
        let delay = try arguments.double(Self.delay, in: 0.01...655.35)
        let width = try arguments.int(Self.width, in: 1...65535)
        let height = try arguments.int(Self.height, in: 1...65535)
        let scaleText = try arguments.value(Self.scale)
        let loop = try arguments.int(Self.loop, in: 0...65535)
        let noLoop = arguments.flag(Self.noLoop)
        let quality = try arguments.int(Self.quality, in: 1...100)
        let dither = try arguments.double(Self.dither, in: 0...1)
        let palette = try arguments.choice(Self.palette, GIFPaletteMode.allCases.map(\.rawValue))
        let fast = arguments.flag(Self.fast)
        let upscale = arguments.flag(Self.upscale)
        let timeout = try NetworkOptions(&arguments).timeout
        let overwrite = out.overwrite
        let inputs = try arguments.positionals()
        let output = try out.required("OUT.gif")

        guard !inputs.isEmpty else { throw LapseError.usage("no input (a video, or images)") }
        guard (output as NSString).pathExtension.lowercased() == "gif" else {
            throw LapseError.usage("\(output): the output must end in .gif")
        }
        let looksLikeVideo: (String) -> Bool = {
            $0.contains("://") || videoExtensions.contains(($0 as NSString).pathExtension.lowercased())
                || inputs.count == 1 && Self.holdsVideo($0)
        }
        if inputs.count > 1, let video = inputs.first(where: looksLikeVideo) {
            throw LapseError.usage("\(video) is a video: give one video, or only images")
        }
        if end != nil && duration != nil { throw LapseError.usage("give --end or --duration, not both") }
        if [width != nil, height != nil, scaleText != nil].filter({ $0 }).count > 1 {
            throw LapseError.usage("give one of --width, --height and --scale")
        }
        if loop != nil && noLoop { throw LapseError.usage("give --loop or --no-loop, not both") }
        var size = GIFJob.Size.auto
        if let width { size = .width(width) }
        if let height { size = .height(height) }
        if let scaleText, scaleText != "auto" {
            guard let f = NumberText.decimal(scaleText), f > 0, f <= 10 else {
                throw LapseError.usage("--scale takes auto or a factor such as 0.5, not '\(scaleText)'")
            }
            size = .scale(f)
        }

        let isVideo = inputs.count == 1 && !inputs[0].hasPrefix("@") && looksLikeVideo(inputs[0])
        let source: GIFJob.Source
        if isVideo {
            if delay != nil { throw LapseError.usage("--delay is for images; a video's frames last 1/fps") }
            source = .video(URL(location: inputs[0]))
        } else {
            if start != nil || end != nil || duration != nil {
                throw LapseError.usage("--start, --end and --duration are for a video input")
            }
            source = .images(try ImageInputs.expand(inputs))
        }
        var job = GIFJob(source: source, output: URL(fileURLWithPath: output))
        if let timeout { job.inputOptions.readTimeout = timeout }
        job.start = start ?? 0
        job.end = end
        job.duration = duration
        if let frameRate { job.frameRate = frameRate }
        job.imageDelay = delay
        job.size = size
        job.options = GIFOptions(
            quality: quality ?? 90, dithering: dither ?? 1,
            palette: palette.flatMap(GIFPaletteMode.init(rawValue:)) ?? .perFrame,
            loopCount: noLoop ? nil : (loop ?? 0), fast: fast)
        job.overwrite = overwrite
        job.upscale = upscale

        let started = Date()
        let summary = try await job.run(progress: console.progress, warning: console.warning)
        let seconds = Date().timeIntervalSince(started)
        let gif = summary.gif
        let loopText = gif.loopCount.map { $0 == 0 ? "loops forever" : "loops \($0)×" } ?? "plays once"
        console.summary(
            [
                "wrote \(gif.url.shown): \(gif.width)x\(gif.height), \(counted(gif.frameCount, "frame")), "
                    + String(format: "%.2f", gif.duration) + " s, \(loopText), \(formatBytes(gif.bytes))",
                (isVideo
                    ? "\(counted(summary.framesSampled, "frame")) sampled in "
                    : "\(counted(summary.framesSampled, "image")) read in ") + String(format: "%.1f", seconds) + " s"
                    + (summary.framesSampled > gif.frameCount
                        ? "; \(summary.framesSampled - gif.frameCount) merged into the one before "
                            + "(unchanged or too short)"
                        : "")
                    + (summary.decodeErrors > 0 ? ", \(summary.decodeErrors) undecodable frames repeated" : "")
            ],
            json: CommandSummary(summary, seconds: seconds))
    }
}
