// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseNet
import Synchronization

extension PanoramaExport {
    /// The record of an unfinished `lapse panoramas` run, `.manifest.json.journal` in the output folder: one JSON
    /// line per panorama, written before its image is renamed into place, so that every image of the folder that
    /// the run wrote has its line. A run that finds a journal (an earlier one was killed or interrupted before its
    /// manifest) takes the images its lines name, when they were made by the same job (source, resolution and
    /// JPEG quality), instead of fetching them again; the manifest written, the journal is deleted.
    final class Journal: Sendable {
        struct Line: Codable {
            /// The job: source name, resolution, JPEG quality.
            var job: String
            var written: Written
        }

        let path: String
        let job: String
        /// Lines of the earlier run of the same job, by file name.
        let earlier: [String: Written]
        private let handle: Mutex<FileHandle?>

        /// Opens the journal of `folder` (reading what an earlier run of `job` wrote, unless `fresh`), creating it,
        /// and holds an exclusive lock on it (`flock`) until ``finish()`` or the process ends: one run writes a
        /// folder at a time. A second run that finds the lock held fails here, before it has written anything.
        /// - Throws: ``LapseError`` `.output` naming the folder when another run holds it, or the journal when it
        ///   cannot be written.
        init(folder: String, job: String, fresh: Bool) throws {
            path = URL(fileURLWithPath: folder).appendingPathComponent(".manifest.json.journal").path
            self.job = job
            var fd: Int32 = -1
            // A journal deleted between open and lock (its run finished) is not this folder's any more: again.
            for _ in 0..<3 {
                fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw LapseError.posix(.output, path, "cannot write") }
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                    let error = errno
                    Glibc.close(fd)
                    if error == EWOULDBLOCK {
                        throw LapseError(
                            .output, folder, "another lapse panoramas run is writing this folder; nothing was written")
                    }
                    throw LapseError.posix(.output, path, "cannot lock", errno: error)
                }
                var opened = stat()
                var named = stat()
                if fstat(fd, &opened) == 0, stat(path, &named) == 0, opened.st_dev == named.st_dev,
                    opened.st_ino == named.st_ino
                {
                    break
                }
                Glibc.close(fd)
                fd = -1
            }
            guard fd >= 0 else { throw LapseError(.output, path, "the journal keeps changing: another run?") }
            let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            var earlier: [String: Written] = [:]
            if fresh {
                ftruncate(fd, 0)
            } else if let data = try? handle.readToEnd() {
                // A line cut short by the kill does not decode: it is left out.
                for line in data.split(separator: UInt8(ascii: "\n")) {
                    if let l = try? JSONDecoder().decode(Line.self, from: Data(line)), l.job == job {
                        earlier[l.written.file] = l.written
                    }
                }
            }
            self.earlier = earlier
            self.handle = Mutex(handle)
        }

        /// The earlier run's record of `file` when it was `panorama` — the same id of the same source, from the
        /// same file (your own photos and videos have ids only unique within their folder or video) and at the
        /// same place (a changed track moves it) — and the image is there, a whole JPEG.
        func reusable(_ file: String, for panorama: PanoramaMetadata, in folder: String) -> Written? {
            guard let w = earlier[file], w.panorama.id == panorama.id, w.panorama.source == panorama.source,
                w.panorama.file == panorama.file, w.panorama.coordinate == panorama.coordinate,
                let data = FileManager.default.contents(
                    atPath: URL(fileURLWithPath: folder).appendingPathComponent(file).path),
                CacheValidation.jpeg(data)
            else { return nil }
            return w
        }

        /// Records `written` (before its image is renamed into place).
        func append(_ written: Written) throws {
            var data = try JSONEncoder().encode(Line(job: job, written: written))
            data.append(UInt8(ascii: "\n"))
            try handle.withLock { h in
                guard let h else { return }
                do {
                    try h.write(contentsOf: data)
                    try h.synchronize()
                } catch {
                    throw LapseError(.output, path, "cannot write: \(error.localizedDescription)")
                }
            }
        }

        /// The manifest is written: the journal goes (deleted while locked, then closed, which ends the lock).
        func finish() {
            handle.withLock { h in
                unlink(path)
                try? h?.close()
                h = nil
            }
        }
    }
}
