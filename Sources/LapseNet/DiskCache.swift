// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import Synchronization

/// Where a cached item lives: a list of parts (source, pano id, zoom, tile…), each sanitised into one
/// path component, so an id from a server can never climb out of the cache folder or name a secret.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The parts as given.
    public let parts: [String]

    /// A key of these parts (each a path component once sanitised).
    public init(_ parts: String...) { self.parts = parts }
    /// A key of these parts.
    public init(parts: [String]) { self.parts = parts }

    /// The relative path: each part sanitised by ``sanitise(_:)``, joined by `/`.
    public var relativePath: String { parts.map(Self.sanitise).joined(separator: "/") }

    /// The key's relative path.
    public var description: String { relativePath }

    /// One safe path component for `part`: letters, digits, `-` and `_` kept, every other byte written as
    /// `%XX` (so distinct parts stay distinct), dots kept except at the start (so never `.` or `..`), never empty;
    /// parts longer than 100 bytes are cut and end in a hash of the whole part.
    public static func sanitise(_ part: String) -> String {
        var out = ""
        for byte in part.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                out.append(Character(Unicode.Scalar(byte)))
            case UInt8(ascii: ".") where !out.isEmpty:
                out.append(".")
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        if out.isEmpty { out = "%00" }
        if out.utf8.count > 100 {
            out = String(out.prefix(80)) + "~" + String(fnv1a(part), radix: 16)
        }
        return out
    }

    /// The 64-bit FNV-1a hash of `text`'s UTF-8 bytes (stable across runs and processes, unlike `Hashable`).
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
        return hash
    }
}

/// An on-disk cache of downloaded bytes (tiles, metadata), one file per ``CacheKey``.
///
/// Writes are atomic (a temporary file in the cache's `.partial` folder, then `rename`), so an interrupted run
/// leaves either a whole entry or none: the temporary files are deleted when the process is interrupted
/// (``TemporaryFiles``, which renames none after that), and those of a process killed outright when the cache
/// is next opened; entries are checked by the caller's `validate` before reuse and deleted when they fail (a
/// truncated JPEG is fetched again). Safe to use from many tasks at once.
public struct DiskCache: Sendable {
    /// The cache's root folder.
    public let directory: URL
    /// Whether the folder is shared with other users (e.g. a team's cluster volume): an HTTP cache then writes
    /// no `private` answer to it (RFC 9111 §5.2.2.7; see ``HTTPCache``).
    public let shared: Bool
    /// Told once a process when the folder's entries cannot be locked (``lock(_:)``).
    public var warning: WarningHandler?

    /// `$XDG_CACHE_HOME/lapse`, or `$HOME/.cache/lapse` when XDG_CACHE_HOME is unset or not absolute, from
    /// `environment` (the XDG Base Directory Specification; the library reads no environment of its own: a
    /// command line passes its process's).
    public static func defaultDirectory(environment env: [String: String]) -> URL {
        if let xdg = env["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("lapse", isDirectory: true)
        }
        let home = env["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".cache/lapse", isDirectory: true)
    }

    /// Opens (and creates) a cache.
    /// - Parameters:
    ///   - directory: the root folder.
    ///   - shared: whether others use the folder too (see ``shared``).
    /// - Throws: ``LapseError`` `.output` when the folder cannot be created.
    public init(directory: URL, shared: Bool = false) throws {
        let dir = directory
        self.directory = dir
        self.shared = shared
        do {
            try FileManager.default.createDirectory(at: partialFolder, withIntermediateDirectories: true)
        } catch {
            throw LapseError(.output, dir.path, "cannot create the cache folder")
        }
        TemporaryFiles.removeOrphans(in: partialFolder, prefix: "")
    }

    /// Where entries are written before they are renamed into place (no key's path starts with a dot).
    var partialFolder: URL { directory.appendingPathComponent(".partial", isDirectory: true) }

    /// The file that holds `key`.
    public func fileURL(for key: CacheKey) -> URL {
        directory.appendingPathComponent(key.relativePath)
    }

    /// The cached bytes of `key`, or `nil` when absent or invalid (an invalid entry is deleted).
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - validate: returns false for bytes that must not be reused (e.g. ``CacheValidation/jpeg(_:)``).
    /// - Returns: the bytes, or nil.
    public func data(for key: CacheKey, validate: ((Data) -> Bool)? = nil) -> Data? {
        let url = fileURL(for: key)
        guard let data = try? Data(contentsOf: url) else { return nil }
        if let validate, !validate(data) {
            try? FileManager.default.removeItem(at: url)
            return nil
        }
        return data
    }

    /// Whether an entry exists for `key` (without validating it).
    public func contains(_ key: CacheKey) -> Bool {
        FileManager.default.fileExists(atPath: fileURL(for: key).path)
    }

    /// Stores `data` under `key`, replacing any entry, atomically.
    /// - Throws: ``LapseError`` `.output` when the file cannot be written.
    public func store(_ data: Data, for key: CacheKey) throws {
        let url = fileURL(for: key)
        let folder = url.deletingLastPathComponent()
        let temp = partialFolder.appendingPathComponent(
            "\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).partial")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw LapseError(.output, url.path, "cannot write the cache entry")
        }
        // Created under the registry's lock: an interruption deletes it or it is never created.
        let written: Bool
        do {
            written = try TemporaryFiles.write(data, to: temp)
        } catch {
            TemporaryFiles.unregister(temp)
            unlink(temp.path)
            throw LapseError(.output, url.path, "cannot write the cache entry")
        }
        guard written else { throw LapseError(.cancelled, url.path, "cancelled") }
        let code = TemporaryFiles.rename(temp, to: url)
        if code != 0 {
            unlink(temp.path)
            throw LapseError.posix(.output, url.path, "cannot write the cache entry", errno: code)
        }
    }

    /// Removes the entry of `key`, if any.
    public func remove(_ key: CacheKey) {
        try? FileManager.default.removeItem(at: fileURL(for: key))
    }
}

/// Ready-made checks for ``DiskCache/data(for:validate:)`` and ``HTTPClient``'s `accept`.
public enum CacheValidation {
    /// A whole JPEG: starts with SOI (FF D8 FF) and ends with EOI (FF D9), allowing trailing zero padding.
    public static func jpeg(_ data: Data) -> Bool {
        guard data.count >= 4, data[data.startIndex] == 0xFF, data[data.startIndex + 1] == 0xD8,
            data[data.startIndex + 2] == 0xFF
        else { return false }
        var end = data.endIndex
        while end > data.startIndex + 2, data[end - 1] == 0 { end -= 1 }
        return data[end - 2] == 0xFF && data[end - 1] == 0xD9
    }

    /// Parses as JSON.
    public static func json(_ data: Data) -> Bool {
        (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
    }
}

/// An exclusive lock on one cache entry, shared by every process (and task) using the folder: whoever holds it is
/// the one fetching and writing the entry; the others wait, then find it stored (`flock(2)` on one of
/// ``DiskCache/lockStripes`` lock files in the cache's `.locks` folder, chosen by the entry's path: entries that share
/// a stripe wait for each other too).
public final class CacheEntryLock: Sendable {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Releases the lock.
    public func unlock() {
        _ = flock(fd, LOCK_UN)
        close(fd)
    }

    /// Processes that were told file locks do not work in their cache (``DiskCache/lock(_:)``): once each.
    static let toldUnlocked = Mutex(false)

    /// Takes the lock of `key` in `cache`, waiting (in 20 ms steps, cancellable) while another holds it.
    /// - Returns: the lock, or nil when the folder cannot be locked (read-only, or a file system without `flock`,
    ///   as some network volumes): the cache then stays correct as without coordination (entries are written whole
    ///   and renamed into place) but two processes may download the same entry; `warning` is told once a process.
    /// - Throws: `CancellationError` when the task is cancelled while waiting.
    static func acquire(_ key: CacheKey, in cache: DiskCache, warning: WarningHandler?) async throws
        -> CacheEntryLock?
    {
        let hash = CacheKey.fnv1a(key.relativePath)
        let folder = cache.directory.appendingPathComponent(".locks", isDirectory: true)
        let path = folder.appendingPathComponent("\(hash % UInt64(DiskCache.lockStripes)).lock").path
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return unlocked(cache, errno: errno, warning: warning) }
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return CacheEntryLock(fd: fd) }
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                close(fd)
                return unlocked(cache, errno: code, warning: warning)
            }
            do { try await Task.sleep(nanoseconds: 20_000_000) } catch {
                close(fd)
                throw error
            }
        }
    }

    private static func unlocked(_ cache: DiskCache, errno code: Int32, warning: WarningHandler?) -> CacheEntryLock? {
        let first = toldUnlocked.withLock { told in
            defer { told = true }
            return !told
        }
        if first {
            warning?(
                """
                cache \(cache.directory.path): entries cannot be locked here (\(String(cString: strerror(code)))): \
                processes sharing it stay correct but may download the same tile twice
                """)
        }
        return nil
    }
}

extension DiskCache {
    /// How many lock files the entries share (see ``CacheEntryLock``).
    public static let lockStripes = 1024

    /// Takes `key`'s entry lock (see ``CacheEntryLock/acquire(_:in:warning:)``): nil when locks do not work here.
    public func lock(_ key: CacheKey) async throws -> CacheEntryLock? {
        try await CacheEntryLock.acquire(key, in: self, warning: warning)
    }
}
