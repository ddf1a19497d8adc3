// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension AtomicOutput {
    /// Deletes the temporary files that earlier runs writing `path` left behind when they were killed
    /// (SIGKILL, a crash, power loss: nothing could clean up): hidden files `.<name>.<pid>-<token>.partial[.ext]`
    /// beside `path` whose process `pid` no longer runs. Files of running processes are left alone. Done by
    /// ``init(path:overwrite:inputs:)``, so every output of every command.
    /// - Returns: the paths deleted.
    @discardableResult
    public static func removeStale(for path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        return TemporaryFiles.removeOrphans(in: url.deletingLastPathComponent(), prefix: ".\(url.lastPathComponent).")
    }
}
