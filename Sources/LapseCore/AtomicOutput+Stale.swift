// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension AtomicOutput {
    /// How long another output's temporary file must have been left unchanged before it counts as stale (its
    /// writer may run on another machine that shares the folder, where its process id means nothing here).
    public static let staleAge: TimeInterval = 600

    /// Deletes the temporary files that earlier runs left behind in `url`'s folder when they were killed
    /// (SIGKILL, a crash, power loss: nothing could clean up): hidden files `.<name>.<pid>-<token>.partial[.ext]`
    /// whose process `pid` no longer runs — those of `url` itself at once, those of other outputs once unchanged
    /// for ``staleAge``. Files of running processes are left alone. Done by ``init(url:overwrite:inputs:)``, so
    /// by every output of every command.
    /// - Returns: the files deleted.
    @discardableResult
    public static func removeStale(for url: URL) -> [URL] {
        let folder = url.deletingLastPathComponent()
        var removed = TemporaryFiles.removeOrphans(in: folder, prefix: ".\(url.lastPathComponent).")
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return removed }
        let now = Date()
        for name in names where name.hasPrefix(".") && name.contains(".partial") {
            let file = folder.appendingPathComponent(name)
            guard let target = targetPath(ofTemporary: name) else { continue }
            // `.<target>.` is the prefix the writer's process id follows.
            guard TemporaryFiles.isOrphan(name, prefix: ".\(target).") else { continue }
            var info = stat()
            guard lstat(file.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
            if now.timeIntervalSince(modified) >= staleAge, unlink(file.path) == 0 { removed.append(file) }
        }
        return removed
    }
}
