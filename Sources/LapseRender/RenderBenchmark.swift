// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// Measures the projector on raw frames, with image decoding out of the measurement (used by
/// `bench/render.sh` through `lapse view --bench`).
public enum RenderBenchmark {
    /// What one run measured.
    public struct Result: Sendable {
        /// Frames rendered.
        public var frames: Int
        /// Seconds spent rendering (table builds included), reading excluded.
        public var renderSeconds: Double
        /// Seconds spent reading the raw frames from the file.
        public var readSeconds: Double
        /// Wall-clock seconds of the whole run.
        public var totalSeconds: Double
    }

    /// Reads `frames` RGBA frames of `sourceWidth × sourceHeight` one after another from the raw file at
    /// `rawPath` (cycling from its start when it holds fewer; a file of one frame is read once), renders each with
    /// `projector`, turning the heading by `360 / frames` degrees every frame, and times it.
    /// - Throws: ``LapseError`` `.invalidInput` when the file cannot be read or holds no whole frame.
    public static func run(
        rawPath: String, sourceWidth: Int, sourceHeight: Int, frames: Int,
        projector: Projector, camera: CameraPose
    ) throws -> Result {
        let frameBytes = sourceWidth * sourceHeight * 4
        guard let handle = FileHandle(forReadingAtPath: rawPath) else {
            throw LapseError(.invalidInput, rawPath, "cannot open the raw frames")
        }
        defer { try? handle.close() }
        let fileSize = (try? handle.seekToEnd()).map(Int.init) ?? 0
        let available = fileSize / frameBytes
        guard available > 0 else {
            throw LapseError(.invalidInput, rawPath, "holds no whole \(sourceWidth)x\(sourceHeight) RGBA frame")
        }
        var panorama = PixelBuffer(width: sourceWidth, height: sourceHeight, fill: RGBA(0, 0, 0, 0))
        var output = PixelBuffer(width: projector.width, height: projector.height, fill: RGBA(0, 0, 0, 0))
        let fd = handle.fileDescriptor
        var render = 0.0
        var read = 0.0
        let start = Date()
        for k in 0..<frames {
            let t0 = Date()
            let index = k % available
            let offset = off_t(index * frameBytes)
            let got =
                k > 0 && available == 1
                ? frameBytes
                : panorama.bytes.withUnsafeMutableBytes { raw -> Int in
                    var done = 0
                    while done < frameBytes {
                        let n = pread(fd, raw.baseAddress! + done, frameBytes - done, offset + off_t(done))
                        if n <= 0 { break }
                        done += n
                    }
                    return done
                }
            guard got == frameBytes else { throw LapseError(.invalidInput, rawPath, "short read at frame \(k)") }
            let t1 = Date()
            var view = camera
            view.heading = camera.heading + 360 * Double(k) / Double(max(frames, 1))
            try projector.render(panorama, camera: view, into: &output)
            let t2 = Date()
            read += t1.timeIntervalSince(t0)
            render += t2.timeIntervalSince(t1)
        }
        return Result(
            frames: frames, renderSeconds: render, readSeconds: read,
            totalSeconds: Date().timeIntervalSince(start))
    }
}
