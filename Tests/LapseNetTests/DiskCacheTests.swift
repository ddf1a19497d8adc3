// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseNet
import Synchronization
import TestSupport
import Testing

@Suite struct DiskCacheTests {
    @Test func storesAndReadsBack() throws {
        let dir = TestData.scratchDirectory("cache")
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = try DiskCache(directory: dir)
        let key = CacheKey("google", "pano_1", "z3", "2_1.jpg")
        #expect(cache.data(for: key) == nil)
        try cache.store(Data([1, 2, 3]), for: key)
        #expect(cache.data(for: key) == Data([1, 2, 3]))
        try cache.store(Data([4]), for: key)
        #expect(cache.data(for: key) == Data([4]))
        // No temporary files left behind.
        let files = try FileManager.default.contentsOfDirectory(
            atPath: cache.fileURL(for: key).deletingLastPathComponent().path)
        #expect(files == ["2_1.jpg"])
    }

    /// Entries are written in the cache's `.partial` folder and renamed into place; the temporary files a
    /// process killed outright left there are deleted when the cache is next opened (a running one's stay).
    @Test func temporaryFilesOfKilledRunsAreRemoved() throws {
        let dir = TestData.scratchDirectory("cache-stale")
        defer { try? FileManager.default.removeItem(at: dir) }
        let partial = dir.appendingPathComponent(".partial")
        try FileManager.default.createDirectory(at: partial, withIntermediateDirectories: true)
        let child = try Shell.run("/bin/sh", ["-c", "echo $$"])
        let deadPID = try #require(Int32(child.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        for name in ["\(deadPID)-1f.partial", "1-2e.partial"] {
            try Data([0]).write(to: partial.appendingPathComponent(name))
        }
        let cache = try DiskCache(directory: dir)
        #expect(try FileManager.default.contentsOfDirectory(atPath: partial.path) == ["1-2e.partial"])
        try cache.store(Data([7]), for: CacheKey("a", "b.jpg"))
        #expect(cache.data(for: CacheKey("a", "b.jpg")) == Data([7]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: partial.path) == ["1-2e.partial"])
    }

    @Test(arguments: [
        ("../../etc/passwd", "%2E.%2F..%2Fetc%2Fpasswd"),
        ("abc-DEF_123", "abc-DEF_123"),
        ("", "%00"),
        (".hidden", "%2Ehidden"),
        ("a b/c", "a%20b%2Fc"),
        ("tile.jpg", "tile.jpg"),
        ("ü", "%C3%BC")
    ])
    func idsAreSanitised(id: String, expected: String) {
        #expect(CacheKey.sanitise(id) == expected)
    }

    @Test func longIdsAreShortenedButDistinct() {
        let a = CacheKey.sanitise(String(repeating: "x", count: 300) + "a")
        let b = CacheKey.sanitise(String(repeating: "x", count: 300) + "b")
        #expect(a.utf8.count <= 100 && b.utf8.count <= 100 && a != b)
    }

    @Test func keysStayInsideTheCache() throws {
        let dir = TestData.scratchDirectory("cache")
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = try DiskCache(directory: dir)
        let url = cache.fileURL(for: CacheKey("..", "../x", "/abs"))
        #expect(url.standardizedFileURL.path.hasPrefix(dir.standardizedFileURL.path + "/"))
        #expect(url.pathComponents.suffix(3) == ["%2E.", "%2E.%2Fx", "%2Fabs"])
    }

    @Test func invalidEntriesAreDropped() throws {
        let dir = TestData.scratchDirectory("cache")
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = try DiskCache(directory: dir)
        let key = CacheKey("t", "1.jpg")
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9])
        try cache.store(jpeg, for: key)
        #expect(cache.data(for: key, validate: CacheValidation.jpeg) == jpeg)
        try cache.store(jpeg.prefix(6), for: key)
        #expect(cache.data(for: key, validate: CacheValidation.jpeg) == nil)
        #expect(!cache.contains(key))
    }

    @Test func defaultDirectoryFollowsXDG() {
        #expect(
            DiskCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "/x/cache", "HOME": "/h"]).path
                == "/x/cache/lapse")
        #expect(
            DiskCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/h"]).path
                == "/h/.cache/lapse")
        #expect(DiskCache.defaultDirectory(environment: ["HOME": "/h"]).path == "/h/.cache/lapse")
    }

    /// An entry's lock is held by one task (or process) at a time: a second waits until the first lets go; where
    /// the folder cannot be locked (here its `.locks` is a file), none is taken and that is said once (issue #44,
    /// item 4).
    @Test func entryLocksWaitAndSayWhenTheyCannotBeHad() async throws {
        let dir = TestData.scratchDirectory("cache-locks")
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = try DiskCache(directory: dir)
        let key = CacheKey("google", "pano", "z2", "0_0.jpg")
        let first = try #require(try await cache.lock(key))
        let order = Mutex<[String]>([])
        let waiter = Task {
            let second = try await cache.lock(key)
            order.withLock { $0.append("second") }
            second?.unlock()
        }
        try await Task.sleep(nanoseconds: 200_000_000)
        order.withLock { $0.append("first done") }
        first.unlock()
        try await waiter.value
        #expect(order.withLock { $0 } == ["first done", "second"])

        let other = dir.appendingPathComponent("unlockable")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Data().write(to: other.appendingPathComponent(".locks"))
        var unlockable = try DiskCache(directory: other)
        let told = Mutex<[String]>([])
        unlockable.warning = { line in told.withLock { $0.append(line) } }
        #expect(try await unlockable.lock(key) == nil)
        #expect(try await unlockable.lock(key) == nil)
        #expect(told.withLock { $0.count } == 1)
        #expect(told.withLock { $0.first?.contains("entries cannot be locked here") } == true)
    }
}
