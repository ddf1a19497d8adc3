// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// The process's temporary files: those of unfinished outputs (``AtomicOutput``) and cache entries being
/// written, deleted all at once when the process is interrupted (``removeAll()``); and the rule that tells a
/// temporary file an earlier process left behind when it was killed outright.
///
/// Temporary names carry their writer's process id: `….<pid>-<token>.partial[.ext]`.
public enum TemporaryFiles {
    private struct State {
        var live = Set<String>()
        /// ``removeAll()`` ran: the process is stopping, nothing more is renamed into place.
        var closed = false
    }
    private static let state = Mutex(State())

    /// Records a temporary file being written.
    public static func register(_ file: URL) { state.withLock { _ = $0.live.insert(file.path) } }

    /// Writes `data` to the temporary file `file` (replacing what is there) and records it, under the registry's
    /// lock, unless the process is stopping: so no file is created after ``removeAll()`` deleted the others (a
    /// write begun just before waits for it; one just after does nothing), which a writer creating the file by
    /// its path at the moment of an interruption would otherwise leave behind.
    /// - Returns: false when the process is stopping (nothing written, nothing recorded).
    /// - Throws: the write's error (the file then recorded, for its writer to delete or ``removeAll()`` to).
    public static func write(_ data: Data, to file: URL) throws -> Bool {
        try state.withLock { s in
            guard !s.closed else { return false }
            s.live.insert(file.path)
            try data.write(to: file)
            return true
        }
    }

    /// Forgets a temporary file (renamed into place or deleted).
    public static func unregister(_ file: URL) { state.withLock { _ = $0.live.remove(file.path) } }

    /// Renames the registered temporary file `file` onto `target` (replacing it) and forgets it, unless the
    /// process is stopping (``removeAll()`` ran: then `file` is gone). Done under the registry's lock, so that an
    /// interruption cannot fall between two files written one after the other (a cache entry's record and its
    /// bytes): either this rename happens before the temporary files are deleted, or neither it nor any later one.
    /// - Returns: 0, or the `errno` of the failed rename (`ECANCELED` when stopping).
    public static func rename(_ file: URL, to target: URL) -> Int32 {
        state.withLock { s in
            s.live.remove(file.path)
            guard !s.closed else {
                unlink(file.path)
                return ECANCELED
            }
            return Glibc.rename(file.path, target.path) == 0 ? 0 : errno
        }
    }

    /// Deletes every temporary file registered and not yet unregistered, and renames none from then on. Safe to
    /// call from a signal handler's dispatch source (not from the raw handler).
    public static func removeAll() {
        state.withLock { s in
            s.closed = true
            for path in s.live { unlink(path) }
            s.live.removeAll()
        }
    }

    /// Whether `name` (a file name) is a temporary file whose writer no longer runs: after `prefix` comes
    /// `<pid>-`, the name contains `.partial`, and no process `pid` exists (this process's own never count).
    public static func isOrphan(_ name: String, prefix: String) -> Bool {
        guard name.hasPrefix(prefix), name.contains(".partial") else { return false }
        let rest = name.dropFirst(prefix.count)
        guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]), pid > 0, pid != getpid() else {
            return false
        }
        // kill(pid, 0) fails with ESRCH when no such process exists.
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Deletes the orphans (``isOrphan(_:prefix:)``) among the files of `directory` whose names start with
    /// `prefix`.
    /// - Returns: the files deleted.
    @discardableResult
    public static func removeOrphans(in directory: URL, prefix: String) -> [URL] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var removed: [URL] = []
        for name in names where isOrphan(name, prefix: prefix) {
            let file = directory.appendingPathComponent(name)
            if unlink(file.path) == 0 { removed.append(file) }
        }
        return removed
    }
}
