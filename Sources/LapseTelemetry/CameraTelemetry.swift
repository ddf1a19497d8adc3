// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// What a camera recorded beside its video, read from the file's timed-metadata track: GoPro's GPMF (`gpmd`) or
/// Google's CAMM (`camm`), all times in video seconds.
public struct CameraTelemetry: Sendable {
    /// The track's format.
    public enum Format: String, Sendable {
        case gpmf = "GPMF"
        case camm = "CAMM"
    }

    /// Which track the telemetry came from (GPMF or CAMM).
    public var format: Format
    /// GPS positions with a fix, in time order.
    public var fixes: [CameraGPSFix]
    /// Gravity in the camera's frame (GPMF `GRAV`), in time order; empty when the track has none.
    public var gravity: [CameraGravity]

    /// Telemetry of `format` with these fixes and gravity records (in time order).
    public init(format: Format, fixes: [CameraGPSFix], gravity: [CameraGravity] = []) {
        self.format = format
        self.fixes = fixes
        self.gravity = gravity
    }

    /// The telemetry of the video at `url` (MP4, MOV or a GoPro `.360`): its `gpmd` track, else its `camm` track;
    /// nil when it has neither.
    /// - Throws: ``LapseError`` `.invalidInput` for a file that does not open or a sample that does not parse
    ///   (naming the file and the sample).
    public static func read(ofVideo url: URL) throws -> CameraTelemetry? {
        var options = MediaInput.Options()
        options.requireVideo = false
        // One pass over the file, whichever track it has.
        guard
            let (tag, samples) = try MediaInput(location: url, options: options).dataSamples(firstOf: ["gpmd", "camm"])
        else { return nil }
        var telemetry = CameraTelemetry(format: tag == "gpmd" ? .gpmf : .camm, fixes: [])
        for (k, sample) in samples.enumerated() {
            do {
                if telemetry.format == .camm {
                    telemetry.fixes += try CAMM.gpsFixes(in: sample.bytes, time: sample.time)
                    continue
                }
                let duration =
                    sample.duration > 0
                    ? sample.duration : (k + 1 < samples.count ? samples[k + 1].time - sample.time : 1)
                // Parsed once for both readers.
                let streams = GPMF.streams(try GPMF.parse(sample.bytes))
                telemetry.fixes += GPMF.gpsFixes(inStreams: streams, start: sample.time, duration: duration)
                telemetry.gravity += GPMF.gravity(inStreams: streams, start: sample.time, duration: duration)
            } catch let error as LapseError {
                throw LapseError(.invalidInput, url, "telemetry sample \(k + 1): \(error.reason)")
            }
        }
        if telemetry.format == .camm { telemetry.fixes.sort { $0.time < $1.time } }
        return telemetry
    }

    /// The GPS fixes of the video's telemetry (``read(ofVideo:)``), nil when it has none.
    public static func gpsFixes(ofVideo url: URL) throws -> [CameraGPSFix]? {
        try read(ofVideo: url)?.fixes
    }

    /// Gravity at `time` seconds of the video: the two samples either side interpolated (and made unit length),
    /// when one of them lies within `tolerance` seconds of it; nil otherwise (a gap in the track says nothing).
    public func gravity(at time: Double, tolerance: Double = 0.5) -> SIMD3<Double>? {
        guard !gravity.isEmpty else { return nil }
        var lo = 0
        var hi = gravity.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if gravity[mid].time < time { lo = mid + 1 } else { hi = mid }
        }
        let after = lo < gravity.count ? gravity[lo] : nil
        let before = lo > 0 ? gravity[lo - 1] : nil
        switch (before, after) {
        case (let b?, let a?) where a.time > b.time && min(time - b.time, a.time - time) <= tolerance:
            let f = (time - b.time) / (a.time - b.time)
            let v = b.vector * (1 - f) + a.vector * f
            return v / max(1e-12, (v * v).sum().squareRoot())
        case (let b?, _) where time - b.time <= tolerance: return b.vector
        case (_, let a?) where a.time - time <= tolerance: return a.vector
        default: return nil
        }
    }
}
