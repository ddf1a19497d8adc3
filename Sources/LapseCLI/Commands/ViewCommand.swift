// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum ViewCommand: Command {
    static let name = "view"
    static let summary = "Render one perspective view of an equirectangular panorama"
    static let output = OutputOptions.output.described(
        "the view to write: .png (lossless) or .jpg/.jpeg (required)", value: "PATH")
    static let heading = Option(
        "--heading", value: "D", help: "compass heading of the view's centre in degrees: 0 north, 90 east (default 0)")
    static let pitch = Option(
        "--pitch", value: "D", help: "degrees up from the horizon, negative looks down, -90…90 (default 0)")
    static let roll = Option("--roll", value: "D", help: "degrees of roll about the viewing axis, -180…180 (default 0)")
    static let panoHeading = Option(
        "--pano-heading", value: "D", help: "compass heading the panorama's centre column faces (default 0)")
    static let panoTilt = Option(
        "--pano-tilt", value: "D", help: "the panorama's own tilt, 0 = level (Google metadata tilt minus 90)")
    static let panoRoll = Option("--pano-roll", value: "D", help: "the panorama's own roll, 0 = level")
    static let interp = Option("--interp", value: "METHOD", help: "bilinear (default), bicubic or lanczos")
    static let quality = Option("--quality", value: "Q", help: "JPEG quality 1…100 (default 95)")
    static let overwrite = OutputOptions.overwrite.described("replace an existing output file")
    static let bench = Option(
        "--bench", value: "N",
        help: """
            render N views, the heading turning every frame (the file's frames in turn), print the times and write \
            nothing (bench/render.sh)
            """)
    static let raw = Option("--raw", value: "WxH", help: "with --bench: PANO is a file of raw RGBA frames of this size")

    static let page = CommandHelp(
        usage: "lapse view PANO -o VIEW.png|.jpg [--heading D] [--pitch D] [--roll D] [--fov D] [--size WxH] [options]",
        about: """
            Render one perspective (rectilinear) view of an equirectangular 360° panorama — the frame a hyperlapse
            would show — e.g. to check a panorama by eye. PANO is any image FFmpeg decodes (JPEG, PNG, WebP…).
            The geometry matches ffmpeg's v360=input=e:output=flat filter.
            """,
        sections: [
            HelpSection(
                "Options",
                [
                    output, heading, pitch, roll, ViewOptions.fov, ViewOptions.size, panoHeading, panoTilt, panoRoll,
                    interp, quality, overwrite
                ]),
            HelpSection("Benchmarking", [bench, raw])
        ],
        examples: [
            "lapse view pano.jpg -o ahead.jpg",
            "lapse view pano.jpg --heading 270 --pitch 10 --fov 75 --size 1920x1080 -o west.png",
            "lapse view streetview.jpg --pano-heading 123.4 --heading 90 -o east.jpg --overwrite"
        ])

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let out = try OutputOptions(&arguments)
        let output = out.path
        let overwrite = out.overwrite
        let heading = try arguments.double(Self.heading, in: -1e6...1e6) ?? 0
        let pitch = try arguments.double(Self.pitch, in: -90...90) ?? 0
        let roll = try arguments.double(Self.roll, in: -180...180) ?? 0
        let viewOptions = try ViewOptions(&arguments)
        let fov = viewOptions.fov ?? 90
        let size = viewOptions.size ?? FrameSize(width: 1280, height: 720)
        let panoHeading = try arguments.double(Self.panoHeading, in: -1e6...1e6) ?? 0
        let panoTilt = try arguments.double(Self.panoTilt, in: -90...90) ?? 0
        let panoRoll = try arguments.double(Self.panoRoll, in: -180...180) ?? 0
        let interp =
            try arguments.choice(Self.interp, Interpolation.allCases.map(\.rawValue)).flatMap(
                Interpolation.init(rawValue:)) ?? .bilinear
        let quality = try arguments.int(Self.quality, in: 1...100) ?? ImageFileFormat.defaultJPEGQuality
        let bench = try arguments.int(Self.bench, in: 1...100_000)
        let raw = try arguments.size(Self.raw)
        let positionals = try arguments.positionals()
        guard positionals.count == 1, let input = positionals.first else {
            throw LapseError.usage(positionals.isEmpty ? "give the panorama to view" : "give exactly one panorama")
        }
        let camera = CameraPose(heading: heading, pitch: pitch, roll: roll, fov: fov)
        let pose = PanoramaPose(heading: panoHeading, tilt: panoTilt, roll: panoRoll)
        // Checked before the projection's tables are allocated (16384x16384 took 3.2 GB before the encoder refused).
        try MemoryCheck.check(
            size.width * size.height * Projector.bytesPerPixel, subject: output,
            for: "a \(size.width)x\(size.height) view")
        let projector = try Projector(width: size.width, height: size.height, interpolation: interp)

        if let bench {
            guard let raw else { throw LapseError.usage("--bench needs --raw WxH (the size of the raw RGBA frames)") }
            // A single view at a time: rendered off the cooperative pool, its rows across the cores (RowBands).
            let r = try await BlockingQueue(label: "lapse.view").run {
                try RenderBenchmark.run(
                    rawPath: input, sourceWidth: raw.width, sourceHeight: raw.height,
                    frames: bench, projector: projector, camera: camera)
            }
            let fps = Double(r.frames) / r.renderSeconds
            console.summary(
                [
                    """
                    rendered \(r.frames) views of \(size.width)x\(size.height) from \(raw.width)x\(raw.height) \
                    (\(interp.rawValue))
                    """,
                    String(
                        format: "render %.3f s (%.2f ms a frame, %.0f fps), reading %.3f s, total %.3f s",
                        r.renderSeconds, 1000 * r.renderSeconds / Double(r.frames), fps, r.readSeconds, r.totalSeconds)
                ],
                json: Summary.RenderBench(
                    frames: r.frames, renderSeconds: r.renderSeconds, readSeconds: r.readSeconds,
                    totalSeconds: r.totalSeconds))
            return
        }
        if raw != nil { throw LapseError.usage("--raw is only for --bench") }

        guard let output else { throw LapseError.usage("give the output file with -o VIEW.png or -o VIEW.jpg") }
        let outputFile = URL(fileURLWithPath: output)
        let inputFile = URL(fileURLWithPath: input)
        guard let format = ImageFileFormat.forFile(outputFile, jpegQuality: quality) else {
            throw LapseError.usage("\(output): the output must end in .png, .jpg or .jpeg")
        }
        try ImageWriter.checkSize(width: size.width, height: size.height, format: format)
        // Check the output before the (slow) decoding, so a refused overwrite fails fast.
        if FileManager.default.fileExists(atPath: output), !overwrite {
            throw LapseError(.output, output, "file exists (use --overwrite to replace it)")
        }
        try AtomicOutput.checkDistinct(output: outputFile, from: [inputFile])
        let panorama = try DecodedImage(url: inputFile).pixels()
        if panorama.width != 2 * panorama.height {
            console.warn(
                "\(input) is \(panorama.width)x\(panorama.height), not 2:1; treating it as a full 360°×180° panorama")
        }
        let view: PixelBuffer
        do {
            // One view: rendered off the cooperative pool, its rows across the cores (RowBands).
            view = try await BlockingQueue(label: "lapse.view").run {
                try projector.render(panorama, pose: pose, camera: camera)
            }
        } catch var error as LapseError where error.subject == nil && error.code == .invalidInput {
            error.subject = input // a panorama too small or too large: say which
            throw error
        }
        try ImageWriter.write(view, to: outputFile, format: format, overwrite: overwrite)
        console.summary(
            [
                """
                wrote \(output) (\(size.width)x\(size.height), heading \
                \(NumberText.compact(heading, digits: 2))°, pitch \(NumberText.compact(pitch, digits: 2))°, fov \
                \(NumberText.compact(fov, digits: 2))°)
                """
            ],
            json: Summary.View(
                output: output, width: size.width, height: size.height, heading: heading, pitch: pitch,
                roll: roll, fov: fov, panoramaWidth: panorama.width, panoramaHeight: panorama.height))
    }
}
