// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// Streams RGBA frames into an animated GIF (GIF89a).
///
/// Each frame added goes through three stages:
/// 1. in order, on the caller's task: alpha made binary (< 112 transparent), its content measured
///    (``FrameAnalysis``: is it mostly smooth, like a wall or sky?), compared with what is displayed (pixels
///    within ``GIFOptions/changeTolerance`` of it become transparent — with per-frame palettes only where
///    the neighbourhood is textured, and nowhere in a smooth frame —, the frame is cropped to the changed
///    rectangle), merged into the previous frame when nothing changed or when the previous frame would last
///    under 2 cs;
/// 2. in parallel, a bounded number of frames at a time: a palette chosen by libimagequant (per-frame palette:
///    in a luma/chroma space, or for a smooth frame in RGB with more colours; see `Quantizer.Profile`),
///    or, with ``GIFPaletteMode/global``, added to a shared histogram and spilled to a temporary file;
/// 3. in order: remapped with dithering over what is displayed (`liq_image_set_background`, so pixels the
///    previous frames already show well stay transparent), each pixel given the previous pixel's index where
///    that shows the same colour (longer LZW strings), and written by giflib.
///
/// Memory is bounded by ``GIFOptions/framesInFlight`` frames, whatever the number of frames.
///
/// Delays are centiseconds computed from the running total of the durations given, rounded, so the delays
/// add up to the total duration (rounding error carried forward); no frame is shown under 2 cs.
///
/// Use from one task: `add` frames in display order, then `finish()`; if the work fails, drop the encoder
/// (or call ``cancel()``) and nothing is left at the target path.
public final class GIFEncoder {
    /// Logical screen width in pixels (every frame is this size before cropping).
    public let width: Int
    /// Logical screen height in pixels.
    public let height: Int
    /// How frames are quantized, dithered, delayed and looped.
    public let options: GIFOptions
    private let output: AtomicOutput
    private let progress: ProgressHandler?
    private var differ: FrameDiffer
    private var writer: GIFWriter?
    private var global: GlobalPalette?
    private var spill: SpillFile?

    private var pending: PreparedFrame?
    private var pendingStartCs = 0
    private var pendingEnd = 0.0
    private var elapsed = 0.0
    private var framesAdded = 0
    private var framesWritten = 0
    private var inFlight: [Task<QuantizedFrame, any Error>] = []
    private let window: Int
    private var finished = false

    /// Prepares a GIF of `width × height` pixels at `url`.
    /// - Parameters:
    ///   - url: the output file; written to a temporary file beside it and moved into place by ``finish()``.
    ///   - width: logical screen width in pixels, 1…65535; every frame added must have this size.
    ///   - height: logical screen height in pixels, 1…65535.
    ///   - options: palette, dithering, loop and speed options.
    ///   - overwrite: replace an existing file.
    ///   - progress: receives `encode` events counted in frames written.
    /// - Throws: ``LapseError`` `.output` (directory missing or not writable, file exists), `.usage` (size).
    public init(
        url: URL, width: Int, height: Int, options: GIFOptions = GIFOptions(), overwrite: Bool = false,
        progress: ProgressHandler? = nil
    ) throws {
        try Self.checkSize(width: width, height: height)
        self.width = width
        self.height = height
        self.options = options
        self.progress = progress
        output = try AtomicOutput(url: url, overwrite: overwrite)
        differ = FrameDiffer(width: width, height: height, tolerance: options.effectiveTolerance)
        window = max(1, options.framesInFlight ?? 2 * ProcessInfo.processInfo.activeProcessorCount)
        if options.palette == .global {
            global = try GlobalPalette(options: options)
            spill = try SpillFile(
                directory: output.temporaryURL.deletingLastPathComponent().path)
        } else {
            writer = try GIFWriter(
                path: output.temporaryURL.filePath, width: width, height: height,
                loopCount: options.loopCount, globalPalette: nil)
        }
    }

    deinit { cancel() }

    /// The most pixels a frame may have (134 megapixels, ``DecodedImage/defaultPixelLimit``): the encoder holds a
    /// few frames of 4 bytes a pixel, so a 65535 × 49151 GIF would take gigabytes a frame.
    public static let maximumPixels = DecodedImage.defaultPixelLimit

    /// Checks a GIF's size: 1 to 65535 pixels each way (the format's limit), at most ``maximumPixels`` in all.
    /// - Throws: ``LapseError`` `.usage` naming the size.
    public static func checkSize(width: Int, height: Int) throws {
        guard (1...65535).contains(width), (1...65535).contains(height) else {
            throw LapseError.usage("a GIF is 1 to 65535 pixels wide and high, not \(width)x\(height)")
        }
        guard width * height <= maximumPixels else {
            throw LapseError.usage(
                """
                a GIF of \(width)x\(height) is \(width * height / 1_000_000) megapixels a frame: at most \
                \(maximumPixels / 1_000_000)
                """)
        }
    }

    /// Adds the next frame.
    /// - Parameters:
    ///   - frame: RGBA, `width × height`; alpha < 112 is transparent (a GIF has no partial transparency).
    ///   - duration: how long it is shown, in seconds (> 0).
    /// - Throws: ``LapseError`` `.usage` for a frame of another size or a non-positive duration;
    ///   `.codec`/`.output` when quantizing or writing fails.
    public func add(_ frame: PixelBuffer, duration: Double) async throws {
        guard !finished else { throw LapseError(.other, nil, "GIF encoder already finished") }
        guard frame.width == width, frame.height == height else {
            throw LapseError.usage("frame \(framesAdded) is \(frame.width)x\(frame.height), not \(width)x\(height)")
        }
        guard duration > 0, duration.isFinite else {
            throw LapseError.usage("frame \(framesAdded) has a duration of \(duration) s")
        }
        framesAdded += 1
        elapsed += duration
        if pending != nil, centiseconds(pendingEnd) - pendingStartCs < 2 {
            pendingEnd = elapsed // shown under 2 cs: this frame is dropped, the previous one lasts longer
            return
        }
        let pixels = FrameDiffer.binarized(frame)
        // Smooth frames (walls, sky: banding and specks show) are redrawn exactly; elsewhere the tolerance
        // only applies where the neighbourhood is textured enough to hide it.
        let adaptive = options.adaptive && options.palette == .perFrame
        let smooth =
            adaptive
            && FrameAnalysis.smoothShare(pixels, width: width, height: height) >= FrameAnalysis.smoothFrameShare
        let tolerances =
            adaptive && !smooth
            ? FrameAnalysis.toleranceMap(pixels, width: width, height: height, tolerance: options.effectiveTolerance)
            : nil
        if smooth { differ.tolerance = 0 } else { differ.tolerance = options.effectiveTolerance }
        var comparison = differ.compare(pixels, tolerances: tolerances)
        if pending != nil, comparison.changed == nil, !comparison.needsClear {
            pendingEnd = elapsed // identical: merged
            return
        }
        if comparison.needsClear, var p = pending {
            // Pixels shown opaque must become transparent: the previous frame covers the whole screen and is
            // disposed to the background, so this one draws on a clear canvas.
            p = expandToFullScreen(p)
            p.disposal = .background
            p.fixedRect = true
            pending = p
            differ.clear()
            comparison = differ.compare(pixels, tolerances: tolerances)
        }
        let first = pending == nil
        if var p = pending {
            p.delay = centiseconds(pendingEnd) - pendingStartCs
            pendingStartCs += p.delay
            try await emit(p)
        }
        let full = GIFRect(x: 0, y: 0, width: width, height: height)
        let rect = first ? full : (comparison.changed ?? GIFRect(x: 0, y: 0, width: 1, height: 1))
        pending = PreparedFrame(
            rect: rect, pixels: differ.draw(pixels, in: rect, tolerances: tolerances), delay: 0,
            disposal: .keep, fixedRect: first, smooth: smooth)
        pendingEnd = elapsed
    }

    /// Writes the last frames and the trailer and moves the file into place.
    /// - Returns: what was written.
    /// - Throws: ``LapseError`` `.invalidInput` when no frame was added; `.codec`/`.output` on failures
    ///   (the target path is then left untouched).
    public func finish() async throws -> GIFSummary {
        guard !finished else { throw LapseError(.other, nil, "GIF encoder already finished") }
        do {
            guard var p = pending else { throw LapseError(.invalidInput, nil, "no frames to write") }
            p.delay = max(2, centiseconds(pendingEnd) - pendingStartCs)
            pending = nil
            try await emit(p)
            if let global, let spill {
                try global.finish()
                let writer = try GIFWriter(
                    path: output.temporaryURL.filePath, width: width, height: height,
                    loopCount: options.loopCount, globalPalette: global.palette)
                self.writer = writer
                try spill.finishWriting()
                while let frame = try spill.next() {
                    try writer.write(try global.remap(frame))
                    report()
                }
            } else {
                while !inFlight.isEmpty { try await writeOldest() }
            }
            guard let writer else { throw LapseError(.other, nil, "no writer") }
            try writer.close()
            let delays = writer.delays
            spill = nil
            try output.commit()
            finished = true
            let size = (try? FileManager.default.attributesOfItem(atPath: output.url.path)[.size] as? NSNumber)?
                .int64Value
            return GIFSummary(
                url: output.url, width: width, height: height, delays: delays,
                loopCount: options.loopCount, bytes: size ?? 0, framesAdded: framesAdded)
        } catch {
            cancel()
            throw error
        }
    }

    /// Stops the work and removes the temporary file; the target path is left as it was.
    public func cancel() {
        guard !finished else { return }
        finished = true
        for task in inFlight { task.cancel() }
        inFlight.removeAll()
        writer = nil
        spill = nil
        output.discard()
    }

    // MARK: - Stages 2 and 3

    private func emit(_ frame: PreparedFrame) async throws {
        if let global, let spill {
            try global.add(frame)
            try spill.append(frame)
            return
        }
        let options = self.options
        inFlight.append(Task { try Quantizer.quantize(frame, options: options) })
        while inFlight.count >= window { try await writeOldest() }
    }

    private func writeOldest() async throws {
        let task = inFlight.removeFirst()
        let quantized = try await task.value
        guard let writer else { return }
        let first = framesWritten == 0
        try writer.write(try quantized.remap(background: first ? nil : writer.displayed(in: quantized.frame.rect)))
        report()
    }

    private func report() {
        framesWritten += 1
        progress?(ProgressEvent(stage: .encode, completed: framesWritten, total: nil, unit: "frames"))
    }

    // MARK: - Helpers

    private func centiseconds(_ seconds: Double) -> Int { Int((seconds * 100).rounded()) }

    private func expandToFullScreen(_ frame: PreparedFrame) -> PreparedFrame {
        let r = frame.rect
        if r.x == 0, r.y == 0, r.width == width, r.height == height { return frame }
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<r.height {
            let src = y * r.width * 4
            let dst = ((r.y + y) * width + r.x) * 4
            out.replaceSubrange(dst..<dst + r.width * 4, with: frame.pixels[src..<src + r.width * 4])
        }
        var f = frame
        f.rect = GIFRect(x: 0, y: 0, width: width, height: height)
        f.pixels = out
        return f
    }
}

/// Prepared frames kept on disk until the global palette is known (an unlinked temporary file).
private final class SpillFile {
    private let handle: FileHandle
    private var readOffset: UInt64 = 0

    init(directory: String) throws {
        var template = Array((directory + "/.lapse-gif-spill-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw LapseError.posix(.output, directory, "cannot create a temporary file")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    func append(_ f: PreparedFrame) throws {
        let header: [Int] = [
            f.rect.x, f.rect.y, f.rect.width, f.rect.height, f.delay, f.disposal.rawValue,
            f.fixedRect ? 1 : 0
        ]
        var data = header.withUnsafeBytes { Data($0) }
        data.append(contentsOf: f.pixels)
        try handle.write(contentsOf: data)
    }

    func finishWriting() throws { try handle.seek(toOffset: 0) }

    func next() throws -> PreparedFrame? {
        let headerSize = 7 * MemoryLayout<Int>.size
        guard let h = try handle.read(upToCount: headerSize), h.count == headerSize else { return nil }
        let v = h.withUnsafeBytes { Array($0.bindMemory(to: Int.self)) }
        let rect = GIFRect(x: v[0], y: v[1], width: v[2], height: v[3])
        let n = rect.width * rect.height * 4
        guard let body = try handle.read(upToCount: n), body.count == n else {
            throw LapseError(.output, nil, "temporary frame file is truncated")
        }
        return PreparedFrame(
            rect: rect, pixels: [UInt8](body), delay: v[4],
            disposal: GIFDisposal(rawValue: v[5]) ?? .keep, fixedRect: v[6] != 0)
    }
}
