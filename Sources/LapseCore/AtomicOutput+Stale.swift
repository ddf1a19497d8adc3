// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension AtomicOutput {
    /// Deletes the temporary files that earlier runs writing `path` left behind when they were killed
    /// (SIGKILL, a crash, power loss: nothing could clean up): hidden files `.<name>.<pid>-<token>.partial[.ext]`
    /// beside `path` whose process `pid` no longer runs. Files of running processes are left alone.
    /// - Returns: the paths deleted.
    @discardableResult
    public static func removeStale(for path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        let prefix = ".\(url.lastPathComponent)."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(prefix) && name.contains(".partial") {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]), pid > 0 else { continue }
            // kill(pid, 0) fails with ESRCH when no such process exists.
            if pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
                let stale = directory.appendingPathComponent(name).path
                if unlink(stale) == 0 { removed.append(stale) }
            }
        }
        return removed
    }
}
