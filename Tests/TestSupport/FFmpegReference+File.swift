// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia

extension FFmpegReference {
    /// Like ``frames(_:filters:size:extraInput:)``, but ffmpeg writes the raw frames to a temporary file
    /// instead of a pipe: reading tens of MB from a pipe through Foundation is slow inside Swift Testing
    /// (each internal thrown error captures a backtrace).
    public static func framesViaFile(_ path: String, filters: String? = nil, size: (Int, Int)? = nil,
                                     extraInput: [String] = []) throws -> [PixelBuffer] {
        let (w, h) = try size ?? dimensions(path, filters: filters)
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("lapse-ref-\(UUID().uuidString.prefix(8)).rgba").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        var args = ["-v", "error", "-nostdin", "-y"] + extraInput + ["-i", path]
        var chain = filters.map { [$0] } ?? []
        if let size { chain.append("scale=\(size.0):\(size.1)") }
        if !chain.isEmpty { args += ["-vf", chain.joined(separator: ",")] }
        args += ["-vsync", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgba", file]
        let result = try Shell.run("ffmpeg", args)
        guard result.status == 0, let data = FileManager.default.contents(atPath: file) else {
            throw ReferenceError(message: "ffmpeg failed: \(result.stderr)")
        }
        let frameBytes = w * h * 4
        guard frameBytes > 0, data.count % frameBytes == 0 else {
            throw ReferenceError(message: "ffmpeg gave \(data.count) bytes, not a multiple of \(w)x\(h)x4")
        }
        let bytes = [UInt8](data)
        return stride(from: 0, to: bytes.count, by: frameBytes).map {
            PixelBuffer(width: w, height: h, bytes: Array(bytes[$0..<$0 + frameBytes]))
        }
    }
}
