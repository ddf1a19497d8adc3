// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// An output file written to a temporary path beside its target and renamed into place only on success,
/// so a failure or an interruption never leaves a half-written file at the target path.
///
/// Usage: create it (this checks the directory and the overwrite rule), write to ``temporaryURL``,
/// then call ``commit()``; if the work fails, call ``discard()`` (also done on deinit when not committed).
public final class AtomicOutput: Sendable {
    /// Where the file ends up.
    public let url: URL
    /// Where to write it meanwhile: a hidden file in the same directory (same file system, so rename is atomic).
    public let temporaryURL: URL
    /// Whether ``commit()`` may replace a file at ``url``.
    public let overwrite: Bool
    /// Set by the first of ``commit()`` and ``discard()``: the other, and any later call, does nothing.
    private let finished = Atomic(false)

    /// The process's umask, read once (reading it means setting it, so only at start-up).
    private static let umaskValue: mode_t = {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }()

    /// Throws when `output` names the same file as one of `inputs` (same device and inode), so that writing the
    /// output can never destroy an input, even with `overwrite`. Inputs that are not files (`https://…`) are
    /// passed over.
    /// - Throws: ``LapseError`` `.usage` naming the output.
    public static func checkDistinct(output: URL, from inputs: [URL]) throws {
        var target = stat()
        guard stat(output.path, &target) == 0 else { return } // a new file cannot be an input
        for input in inputs where input.isFileURL {
            var source = stat()
            if stat(input.path, &source) == 0 && source.st_dev == target.st_dev && source.st_ino == target.st_ino {
                throw LapseError(.usage, output, "the output is the same file as the input \(input.shown)")
            }
        }
    }

    /// - Parameters:
    ///   - url: the target file.
    ///   - overwrite: replace an existing file at `url`; otherwise an existing file is an error.
    ///   - inputs: files the job reads; the output may not be one of them (see ``checkDistinct(output:from:)``).
    /// - Throws: ``LapseError`` with code `.output` when the directory does not exist or is not writable,
    ///   or the file exists and `overwrite` is false.
    public init(url: URL, overwrite: Bool, inputs: [URL] = []) throws {
        self.url = url
        self.overwrite = overwrite
        try Self.checkDistinct(output: url, from: inputs)
        let path = url.path
        let directory = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw LapseError(.output, url, "directory \(directory) does not exist")
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            // A folder is never replaced, with `overwrite` or not: said before any work, not when the file is moved.
            if isFolder.boolValue { throw LapseError(.output, url, "is a folder, not a file") }
            if !overwrite { throw LapseError(.output, url, "file exists (use `overwrite` to replace it)") }
        }
        guard access(directory, W_OK) == 0 else {
            throw LapseError(.output, url, "directory \(directory) is not writable")
        }
        // A run killed outright (SIGKILL, a crash) could not delete its temporary file: gone before starting again.
        Self.removeStale(for: url)
        let name = url.lastPathComponent
        let ext = url.pathExtension
        let token = UInt32.random(in: 0...UInt32.max)
        let tempName = ".\(name).\(getpid())-\(String(token, radix: 16)).partial" + (ext.isEmpty ? "" : ".\(ext)")
        temporaryURL = url.deletingLastPathComponent().appendingPathComponent(tempName)
        TemporaryFiles.register(temporaryURL)
    }

    /// Moves the temporary file onto the target path. Without ``overwrite`` a file that appeared at the target
    /// while the job ran is kept: the move is a hard link, which fails rather than replace (then an unlink of
    /// the temporary name; a file system without hard links gets a check and a rename), and the finished file
    /// goes to the first free `NAME-1.EXT`, `NAME-2.EXT`… beside it instead, which the error names.
    /// - Throws: ``LapseError`` `.output` when the temporary file is missing or cannot be moved, or when a file
    ///   appeared at the target (the finished output is then kept under the name the error gives).
    public func commit() throws {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        TemporaryFiles.unregister(temporaryURL)
        let temporaryPath = temporaryURL.path
        // Ordinary file permissions (0666 less the umask), whatever the writer created it with (giflib uses 0600).
        chmod(temporaryPath, 0o666 & ~Self.umaskValue)
        if overwrite {
            guard rename(temporaryPath, url.path) == 0 else { throw failure() }
            return
        }
        let moved = Self.moveWithoutReplacing(temporaryPath, to: url.path)
        switch moved {
        case 0: return
        case EEXIST:
            // Someone else's file: it stays, and the finished work is kept beside it.
            let ext = url.pathExtension
            let base = url.deletingPathExtension().path
            for n in 1...999 {
                let alternative = base + "-\(n)" + (ext.isEmpty ? "" : "." + ext)
                if Self.moveWithoutReplacing(temporaryPath, to: alternative) == 0 {
                    throw LapseError(
                        .output, url,
                        """
                        a file appeared here while the job ran and was kept (`overwrite` replaces it); the \
                        finished output is \(alternative)
                        """
                    )
                }
            }
            unlink(temporaryPath)
            throw LapseError(
                .output, url, "a file appeared here while the job ran and was kept (`overwrite` replaces it)")
        default:
            throw failure(errno: moved)
        }
    }

    /// The move failed with `errno` (the current one unless given): the temporary file is deleted.
    private func failure(errno value: Int32 = errno) -> LapseError {
        let error = LapseError.posix(.output, url, "cannot move the finished file into place", errno: value)
        unlink(temporaryURL.path)
        return error
    }

    /// Moves `source` to `target` unless something is at `target`: 0, or the errno (`EEXIST` when `target` exists).
    static func moveWithoutReplacing(_ source: String, to target: String) -> Int32 {
        if link(source, target) == 0 {
            unlink(source)
            return 0
        }
        let error = errno
        guard error == EPERM || error == ENOTSUP || error == EOPNOTSUPP || error == EXDEV || error == EMLINK else {
            return error
        }
        // No hard links here (some network and FUSE file systems): check, then rename.
        if access(target, F_OK) == 0 { return EEXIST }
        return rename(source, target) == 0 ? 0 : errno
    }

    /// Deletes the temporary file, leaving the target path as it was.
    public func discard() {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        TemporaryFiles.unregister(temporaryURL)
        unlink(temporaryURL.path)
    }

    deinit { discard() }

    /// The target path of a temporary path made by ``init(url:overwrite:inputs:)``
    /// (`DIR/.NAME.PID-TOKEN.partial[.EXT]` → `DIR/NAME`), or nil for any other path: errors met while writing name the
    /// file the user asked for.
    public static func targetPath(ofTemporary temporary: String) -> String? {
        let url = URL(fileURLWithPath: temporary)
        let name = url.lastPathComponent
        guard name.hasPrefix("."),
            let range = name.range(of: #"\.[0-9]+-[0-9a-f]+\.partial(\.[^.]*)?$"#, options: .regularExpression),
            range.lowerBound > name.index(after: name.startIndex)
        else { return nil }
        let target = String(name[name.index(after: name.startIndex)..<range.lowerBound])
        let folder = url.deletingLastPathComponent().path
        return temporary.contains("/") ? (folder as NSString).appendingPathComponent(target) : target
    }

    /// Writes `data` to ``temporaryURL`` (replacing what is there), directly: Foundation's atomic writes
    /// (`FileManager.createFile`, `Data.write(options: .atomic)`) add a second temporary file of their own
    /// (`.dat.nosync…`), which an interruption would leave in the output folder.
    /// - Throws: ``LapseError`` `.output` naming ``url`` when the file cannot be written.
    public func write(_ data: Data) throws {
        // Under the registry's lock, so an interruption cannot fall between its deletions and this file's creation.
        let written: Bool
        do {
            written = try TemporaryFiles.write(data, to: temporaryURL)
        } catch {
            let reason = (error as NSError).localizedDescription
            throw LapseError(.output, url, "cannot write: \(reason)")
        }
        guard written else { throw LapseError(.cancelled, url, "cancelled") }
    }
}
