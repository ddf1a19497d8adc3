// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// The process's temporary files: those of unfinished outputs (``AtomicOutput``) and cache entries being
/// written, deleted all at once when the process is interrupted (``removeAll()``); and the rule that tells a
/// temporary file an earlier process left behind when it was killed outright.
///
/// Temporary names carry their writer's process id: `….<pid>-<token>.partial[.ext]`.
public enum TemporaryFiles {
    private static let live = Mutex<Set<String>>([])

    /// Records a temporary file being written.
    public static func register(_ path: String) { live.withLock { _ = $0.insert(path) } }

    /// Forgets a temporary file (renamed into place or deleted).
    public static func unregister(_ path: String) { live.withLock { _ = $0.remove(path) } }

    /// Deletes every temporary file registered and not yet unregistered. Safe to call from a signal handler's
    /// dispatch source (not from the raw handler).
    public static func removeAll() {
        for path in live.withLock({ Array($0) }) { unlink(path) }
    }

    /// Whether `name` (a file name) is a temporary file whose writer no longer runs: after `prefix` comes
    /// `<pid>-`, the name contains `.partial`, and no process `pid` exists (this process's own never count).
    public static func isOrphan(_ name: String, prefix: String) -> Bool {
        guard name.hasPrefix(prefix), name.contains(".partial") else { return false }
        let rest = name.dropFirst(prefix.count)
        guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]), pid > 0, pid != getpid() else { return false }
        // kill(pid, 0) fails with ESRCH when no such process exists.
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Deletes the orphans (``isOrphan(_:prefix:)``) among the files of `directory` whose names start with
    /// `prefix`.
    /// - Returns: the paths deleted.
    @discardableResult
    public static func removeOrphans(in directory: URL, prefix: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var removed: [String] = []
        for name in names where isOrphan(name, prefix: prefix) {
            let path = directory.appendingPathComponent(name).path
            if unlink(path) == 0 { removed.append(path) }
        }
        return removed
    }
}
