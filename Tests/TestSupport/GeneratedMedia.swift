// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Small inputs made by the ffmpeg CLI for tests (lavfi sources), written into a scratch directory.
public enum GeneratedMedia {
    /// Writes one still image from a lavfi source, e.g. `color=c=red:s=64x48` or `testsrc2=s=320x240`.
    @discardableResult
    public static func image(_ source: String, to path: String, filters: String? = nil) throws -> String {
        var args = ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", source]
        if let filters { args += ["-vf", filters] }
        args += ["-frames:v", "1", path]
        let r = try Shell.run("ffmpeg", args)
        guard r.status == 0 else { throw ReferenceError(message: "ffmpeg could not make \(path): \(r.stderr)") }
        return path
    }
}
