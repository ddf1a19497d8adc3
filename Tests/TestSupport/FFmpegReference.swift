// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia

/// The ffmpeg and ffprobe command-line tools as an independent reference in tests.
public enum FFmpegReference {
    /// Decodes every frame of a video (or an image) with the ffmpeg CLI to RGBA at its coded size
    /// (or `size` when given), with `filters` (an `-vf` chain) applied first.
    public static func frames(
        _ path: String, filters: String? = nil, size: (Int, Int)? = nil,
        extraInput: [String] = []
    ) throws -> [PixelBuffer] {
        let (w, h) = try size ?? dimensions(path, filters: filters)
        var args = ["-v", "error", "-nostdin"] + extraInput + ["-i", path]
        var chain = filters.map { [$0] } ?? []
        if let size { chain.append("scale=\(size.0):\(size.1)") }
        if !chain.isEmpty { args += ["-vf", chain.joined(separator: ",")] }
        // Through a temporary file: reading tens of MB from a pipe is very slow in corelibs Foundation.
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("lapse-ref-\(UUID().uuidString).rgba")
        defer { try? FileManager.default.removeItem(at: raw) }
        args += ["-vsync", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgba", "-y", raw.path]
        let result = try Shell.run("ffmpeg", args)
        guard result.status == 0 else { throw ReferenceError(message: "ffmpeg failed: \(result.stderr)") }
        let frameBytes = w * h * 4
        let data = try [UInt8](Data(contentsOf: raw))
        guard frameBytes > 0, data.count % frameBytes == 0 else {
            throw ReferenceError(message: "ffmpeg gave \(data.count) bytes, not a multiple of \(w)x\(h)x4")
        }
        return stride(from: 0, to: data.count, by: frameBytes).map {
            PixelBuffer(width: w, height: h, bytes: Array(data[$0..<$0 + frameBytes]))
        }
    }

    /// Every frame of a video as the ffmpeg CLI decodes it, as the planes of yuv420p without any conversion
    /// (a video that is yuv420p already: its samples exactly): Y `width × height`, U and V `width/2 × height/2`.
    public static func yuv420pFrames(_ path: String, width: Int, height: Int) throws -> [(
        y: [UInt8], u: [UInt8], v: [UInt8]
    )] {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("lapse-ref-\(UUID().uuidString).yuv")
        defer { try? FileManager.default.removeItem(at: raw) }
        let result = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-i", path, "-vsync", "passthrough", "-f", "rawvideo",
                "-pix_fmt", "yuv420p", "-y", raw.path
            ])
        guard result.status == 0 else { throw ReferenceError(message: "ffmpeg failed: \(result.stderr)") }
        let luma = width * height
        let chroma = (width / 2) * (height / 2)
        let data = try [UInt8](Data(contentsOf: raw))
        guard data.count % (luma + 2 * chroma) == 0 else {
            throw ReferenceError(
                message: "ffmpeg gave \(data.count) bytes, not whole \(width)x\(height) yuv420p frames")
        }
        return stride(from: 0, to: data.count, by: luma + 2 * chroma).map {
            (
                Array(data[$0..<$0 + luma]), Array(data[$0 + luma..<$0 + luma + chroma]),
                Array(data[$0 + luma + chroma..<$0 + luma + 2 * chroma])
            )
        }
    }

    /// Width and height of the first video stream after `filters`, as ffmpeg sees them.
    public static func dimensions(_ path: String, filters: String? = nil) throws -> (Int, Int) {
        if filters == nil {
            let s = try probe(
                path, ["-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0"])
            let parts = s.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
            guard parts.count >= 2 else { throw ReferenceError(message: "no size for \(path)") }
            return (parts[0], parts[1])
        }
        throw ReferenceError(message: "give the size explicitly when using filters")
    }

    /// Runs ffprobe with `arguments` on `path` and returns its stdout.
    public static func probe(_ path: String, _ arguments: [String]) throws -> String {
        let result = try Shell.run("ffprobe", ["-v", "error"] + arguments + [path])
        guard result.status == 0 else { throw ReferenceError(message: "ffprobe failed: \(result.stderr)") }
        return result.stdout
    }

    /// ffprobe's `-show_streams -show_format` as JSON.
    public static func probeJSON(_ path: String, extra: [String] = []) throws -> [String: Any] {
        let text = try probe(path, ["-of", "json", "-show_streams", "-show_format"] + extra)
        return (try JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// The container's metadata tags (`format.tags` of ffprobe's JSON: `copyright`, `comment`…), empty when none.
    public static func formatTags(_ path: String) throws -> [String: String] {
        (try probeJSON(path)["format"] as? [String: Any])?["tags"] as? [String: String] ?? [:]
    }

    /// Presentation times (seconds) of every video frame, from ffprobe.
    public static func frameTimes(_ path: String) throws -> [Double] {
        let s = try probe(path, ["-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0"])
        return s.split(whereSeparator: \.isNewline).compactMap { Double($0.split(separator: ",").first ?? "") }
    }
}

public struct ReferenceError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
