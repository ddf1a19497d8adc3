// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A file shaped as a GoPro MAX `.360` is, made from the real frames of `pano360/gopro_max_eac` (no public `.360`
/// file is small enough to ship): its two cube-map streams as HEVC (`hvc1`), the first video stream, then the real
/// GoPro MAX GPMF track of `telemetry/gpmf/max-heromode.mp4` (`gpmd`, a walk of about 13 m), then the second video
/// stream — the order GoPro writes them in (video, …, data, …, video).
public enum GoProMAXFile {
    /// Writes `<folder>/<name>.360` of the 3K (2272 × 736 a stream) or 5.6K (4096 × 1344) frames, the four frames
    /// repeated `loops` times at `fps` frames a second, in `pixelFormat` (the JPEGs' full-range `yuvj420p`, or
    /// `yuv420p`: limited range, converted to and tagged BT.709), and returns its path.
    @discardableResult
    public static func make(
        in folder: URL, name: String = "GS018423", resolution: String = "3k", fps: Int = 4, loops: Int = 1,
        pixelFormat: String = "yuvj420p"
    ) throws -> String {
        let (dir, prefix) = resolution == "3k" ? ("3k", "GS018423") : ("5_6k", "GS018421")
        let frames = TestData.path("pano360/gopro_max_eac/\(dir)")
        let path = folder.appendingPathComponent("\(name).360").path
        var args = ["-v", "error", "-nostdin", "-y"]
        for track in ["track0", "track5"] {
            args += [
                "-stream_loop", String(loops - 1), "-framerate", String(fps), "-i",
                "\(frames)/\(track)/\(prefix)_%d.jpg"
            ]
        }
        args += [
            "-i", TestData.path("telemetry/gpmf/max-heromode.mp4"), "-map", "0:v", "-map", "2:3", "-map", "1:v",
            "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-crf", "18", "-pix_fmt",
            pixelFormat, "-tag:v",
            "hvc1", "-c:d", "copy", "-tag:d:0", "gpmd", "-t", String(Double(4 * loops) / Double(fps)), "-f", "mp4",
            path
        ]
        if pixelFormat != "yuvj420p" {
            // Converted and tagged BT.709, as a camera's video is (the JPEGs are BT.601).
            args.insert(
                contentsOf: [
                    "-vf", "scale=out_color_matrix=bt709:out_range=tv", "-colorspace", "bt709", "-color_primaries",
                    "bt709", "-color_trc", "bt709"
                ], at: args.count - 1)
        }
        let r = try Shell.run("ffmpeg", args)
        guard r.status == 0 else { throw ReferenceError(message: "ffmpeg could not make \(path): \(r.stderr)") }
        return path
    }
}
