// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import Synchronization

/// What a response allows a cache to do with it, from its `Cache-Control`, `Age`, `ETag` and `Last-Modified`
/// headers (RFC 9111 §5.2.2: `max-age`, `s-maxage`, `no-store`, `no-cache`, `private`, `must-revalidate`,
/// `proxy-revalidate`; RFC 5861 §3 `stale-while-revalidate`; RFC 9110 §8.8 validators).
public struct CachePolicy: Sendable, Equatable, Codable {
    /// `max-age`: seconds the response stays fresh; `nil` when the response gives no lifetime (no permission to
    /// keep it beyond the job).
    public var maxAge: Double?
    /// `s-maxage`: the lifetime in a shared cache, where it replaces `max-age` and implies `proxy-revalidate`.
    public var sharedMaxAge: Double?
    /// `stale-while-revalidate`: seconds after it goes stale during which the response may still be used while it
    /// is revalidated in the background (not with `must-revalidate` or `no-cache`).
    public var staleWhileRevalidate: Double?
    /// `must-revalidate`: once stale, never used before the origin has validated it.
    public var mustRevalidate: Bool
    /// `proxy-revalidate`: `must-revalidate` for shared caches only.
    public var proxyRevalidate: Bool
    /// `no-cache`: stored, but validated before every use.
    public var noCache: Bool
    /// `no-store`: never written to disk (kept in memory for the job only).
    public var noStore: Bool
    /// `private`: for the user's own cache only, never a shared one.
    public var isPrivate: Bool
    /// The entity tag, for revalidation with `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` date as sent, for revalidation with `If-Modified-Since` when there is no ETag.
    public var lastModified: String?
    /// The response's `Age` in seconds: how long it had already been in a shared cache (RFC 9111 §5.1), taken off
    /// its lifetime.
    public var age: Double

    /// A policy with the given values (see the properties).
    public init(
        maxAge: Double? = nil, sharedMaxAge: Double? = nil, staleWhileRevalidate: Double? = nil,
        mustRevalidate: Bool = false, proxyRevalidate: Bool = false, noCache: Bool = false, noStore: Bool = false,
        isPrivate: Bool = false, etag: String? = nil, lastModified: String? = nil, age: Double = 0
    ) {
        self.maxAge = maxAge
        self.sharedMaxAge = sharedMaxAge
        self.staleWhileRevalidate = staleWhileRevalidate
        self.mustRevalidate = mustRevalidate
        self.proxyRevalidate = proxyRevalidate
        self.noCache = noCache
        self.noStore = noStore
        self.isPrivate = isPrivate
        self.etag = etag
        self.lastModified = lastModified
        self.age = age
    }

    /// The policy of `response`. Directive names are case-insensitive; a duplicated or malformed delta-seconds
    /// value counts as 0 (RFC 9111 §4.2.1: such a response is stale at once).
    public init(_ response: HTTPResponse) {
        self.init()
        for directive in (response.header("Cache-Control") ?? "").split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard let name = parts.first?.lowercased() else { continue }
            func seconds() -> Double {
                guard parts.count == 2,
                    let value = Double(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))),
                    value >= 0, value.isFinite
                else { return 0 }
                return value
            }
            switch name {
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "private": isPrivate = true
            case "must-revalidate": mustRevalidate = true
            case "proxy-revalidate": proxyRevalidate = true
            case "max-age": maxAge = maxAge == nil ? seconds() : 0
            case "s-maxage": sharedMaxAge = sharedMaxAge == nil ? seconds() : 0
            case "stale-while-revalidate": staleWhileRevalidate = seconds()
            default: break
            }
        }
        age =
            response.header("Age").flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            .map { $0.isFinite ? max(0, $0) : 0 } ?? 0
        etag = response.header("ETag")
        lastModified = response.header("Last-Modified")
    }

    /// Whether the response may be written to disk in a cache that is `shared` or not: not `no-store`, and not
    /// `private` in a shared cache.
    public func mayStore(shared: Bool) -> Bool { !noStore && !(shared && isPrivate) }

    /// Seconds the response stays fresh in such a cache (0 for `no-cache`); `nil` when it names no lifetime.
    public func lifetime(shared: Bool) -> Double? {
        if noCache { return 0 }
        return shared ? sharedMaxAge ?? maxAge : maxAge
    }

    /// Whether it may be kept after the job: stored on disk with a lifetime.
    public func mayKeep(shared: Bool) -> Bool { mayStore(shared: shared) && lifetime(shared: shared) != nil }

    /// Whether, once stale, it must be validated before any use (no serving while revalidating).
    public func revalidatesWhenStale(shared: Bool) -> Bool {
        mustRevalidate || noCache || (shared && (proxyRevalidate || sharedMaxAge != nil))
    }

    /// Whether a stale copy can be validated with a conditional request.
    public var hasValidator: Bool { etag != nil || lastModified != nil }

    /// The conditional request's headers: `If-None-Match`, else `If-Modified-Since` (RFC 9110 §13.1.3).
    public var conditionalHeaders: [String: String] {
        if let etag { return ["If-None-Match": etag] }
        if let lastModified { return ["If-Modified-Since": lastModified] }
        return [:]
    }

    /// This policy updated by a 304 answer's (RFC 9111 §4.3.4: the new headers replace the stored ones; the
    /// validators stay when the 304 does not repeat them).
    func renewed(by update: CachePolicy, response: HTTPResponse) -> CachePolicy {
        var p = response.header("Cache-Control") == nil ? self : update
        p.age = update.age
        p.etag = update.etag ?? etag
        p.lastModified = update.lastModified ?? lastModified
        return p
    }

    private enum CodingKeys: String, CodingKey {
        case maxAge, sharedMaxAge, staleWhileRevalidate, mustRevalidate, proxyRevalidate, noCache, noStore,
            isPrivate, etag, lastModified, age
    }

    /// Reads records written by earlier versions too (which held `maxAge`, `noStore`, `etag` and `age` only).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            maxAge: try c.decodeIfPresent(Double.self, forKey: .maxAge),
            sharedMaxAge: try c.decodeIfPresent(Double.self, forKey: .sharedMaxAge),
            staleWhileRevalidate: try c.decodeIfPresent(Double.self, forKey: .staleWhileRevalidate),
            mustRevalidate: try c.decodeIfPresent(Bool.self, forKey: .mustRevalidate) ?? false,
            proxyRevalidate: try c.decodeIfPresent(Bool.self, forKey: .proxyRevalidate) ?? false,
            noCache: try c.decodeIfPresent(Bool.self, forKey: .noCache) ?? false,
            noStore: try c.decodeIfPresent(Bool.self, forKey: .noStore) ?? false,
            isPrivate: try c.decodeIfPresent(Bool.self, forKey: .isPrivate) ?? false,
            etag: try c.decodeIfPresent(String.self, forKey: .etag),
            lastModified: try c.decodeIfPresent(String.self, forKey: .lastModified),
            age: try c.decodeIfPresent(Double.self, forKey: .age) ?? 0)
    }
}

/// Downloads through a ``DiskCache`` the way HTTP caching says (RFC 9111, with RFC 5861's
/// `stale-while-revalidate`), for content whose terms require it (Google's Map Tiles policies: honour
/// `Cache-Control` and `ETag`).
///
/// - A response that may be kept (``CachePolicy/mayKeep(shared:)``) is stored with its policy and the time it was
///   stored; while fresh (`age < lifetime`) it is used without a request. Once stale it is revalidated with
///   `If-None-Match` (or `If-Modified-Since`): a 304 keeps the bytes and renews the lifetime; without a validator
///   it is fetched again. Within its `stale-while-revalidate` window it is used at once and revalidated in the
///   background (``finishRevalidations()`` waits for those), unless `must-revalidate` or `no-cache` forbid it.
/// - `no-store` (and `private` when the cache is ``DiskCache/shared``) is never written to disk: it is held in
///   memory for the job (at most ``memoryLimit`` bytes, least recently used dropped first), so a rerun after a
///   crash downloads it again.
/// - A response without a lifetime (no `max-age`) is stored as **transient**: only for the job, so that a rerun
///   after a crash resumes. ``discardTransient()`` removes what this process stored when the job has finished;
///   leftovers of killed runs are removed by the next run once older than ``transientLifetime``.
/// - Entries stored without a policy (by older versions), stale ones without a validator, and, in a shared cache,
///   `private` ones a private use of the folder left, are deleted and fetched again; an `Age` header shortens the
///   lifetime by the time the answer already spent in another cache.
public final class HTTPCache: Sendable {
    /// How long a transient entry may be reused by a rerun after a crash, in seconds (1 hour).
    public static let transientLifetime: Double = 3600

    /// Where the answers are kept.
    public let cache: DiskCache
    /// Bytes of answers held in memory only (`no-store`), 64 MiB by default.
    public let memoryLimit: Int
    /// The clock (tests move it forward to make entries stale).
    private let now: @Sendable () -> Date
    private let transientKeys = Mutex<Set<CacheKey>>([])
    private let memory: Mutex<MemoryStore>
    private let revalidations = Mutex<[UUID: Task<Void, Never>]>([:])

    private struct Record: Codable {
        var stored: Double
        var policy: CachePolicy
    }

    /// Answers kept in memory for the job, least recently used dropped beyond a byte limit.
    private struct MemoryStore {
        var entries: [CacheKey: (data: Data, record: Record, used: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        let limit: Int

        mutating func insert(_ data: Data, record: Record, for key: CacheKey) {
            remove(key)
            guard data.count <= limit else { return }
            clock += 1
            entries[key] = (data, record, clock)
            bytes += data.count
            while bytes > limit, let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key {
                remove(oldest)
            }
        }

        mutating func get(_ key: CacheKey) -> (Data, Record)? {
            guard var entry = entries[key] else { return nil }
            clock += 1
            entry.used = clock
            entries[key] = entry
            return (entry.data, entry.record)
        }

        mutating func remove(_ key: CacheKey) {
            if let old = entries.removeValue(forKey: key) { bytes -= old.data.count }
        }
    }

    /// - Parameters:
    ///   - cache: the folder; its ``DiskCache/shared`` decides what `private` answers may be written.
    ///   - memoryLimit: bytes of `no-store` answers held in memory for the job.
    ///   - now: the clock.
    public init(
        cache: DiskCache, memoryLimit: Int = 64 << 20, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.cache = cache
        self.memoryLimit = memoryLimit
        self.now = now
        self.memory = Mutex(MemoryStore(limit: memoryLimit))
        sweepTransient()
    }

    /// The bytes for `key`: from the cache when fresh (or stale within `stale-while-revalidate`, revalidated in the
    /// background), after a revalidation when stale, else downloaded.
    /// - Parameters:
    ///   - url: where the content lives.
    ///   - key: the cache entry's key.
    ///   - client: the HTTP client that downloads and revalidates.
    ///   - validate: whether cached or downloaded bytes are whole (e.g. ``CacheValidation/jpeg(_:)``).
    ///   - temporaryRefusal: a service's quota answers that are not HTTP 429, retried with backoff (see
    ///     ``HTTPClient/get(_:headers:accept:temporaryRefusal:maxBodyBytes:)``).
    ///   - maxBodyBytes: the largest answer accepted (see
    ///     ``HTTPClient/get(_:headers:accept:temporaryRefusal:maxBodyBytes:)``).
    ///   - check: throws the caller's error for an answer that is not content (called for every answer but a 304
    ///     that revalidates an entry; a 2xx must pass through it unchanged).
    /// - Returns: the bytes and whether no download was needed (fresh, revalidated with 304, or used while
    ///   revalidating).
    /// - Throws: the client's errors and `check`'s.
    public func get(
        _ url: URL, key: CacheKey, client: HTTPClient, validate: @escaping @Sendable (Data) -> Bool,
        temporaryRefusal: (@Sendable (HTTPResponse) -> String?)? = nil, maxBodyBytes: Int? = nil,
        check: (HTTPResponse) throws -> Void
    ) async throws -> (data: Data, fromCache: Bool) {
        // One process (and task) at a time fetches an entry; the others wait and then find it stored (a shared
        // cache: segments at once, machines on one volume).
        let lock = try await cache.lock(key)
        defer { lock?.unlock() }
        let shared = cache.shared
        let clock = now().timeIntervalSince1970
        if let (data, record) = memory.withLock({ $0.get(key) }) {
            if clock - record.stored < record.policy.lifetime(shared: shared) ?? Self.transientLifetime {
                return (data, true)
            }
            memory.withLock { $0.remove(key) }
        }
        var stale: (Data, Record)?
        if let data = cache.data(for: key, validate: validate) {
            if let record = record(key), record.policy.mayStore(shared: shared),
                let lifetime = record.policy.lifetime(shared: shared)
            {
                let age = clock - record.stored
                if age < lifetime { return (data, true) }
                if let window = record.policy.staleWhileRevalidate, age < lifetime + window,
                    !record.policy.revalidatesWhenStale(shared: shared)
                {
                    revalidateInBackground(
                        url, key: key, stale: (data, record), client: client, validate: validate,
                        maxBodyBytes: maxBodyBytes)
                    return (data, true)
                }
                if record.policy.hasValidator { stale = (data, record) } else { remove(key) }
            } else {
                remove(key) // kept by a version that did not honour Cache-Control, or private in a shared cache
            }
        }
        let transient = transientKey(key)
        if stale == nil, let data = cache.data(for: transient, validate: validate), let record = record(transient),
            clock - record.stored < Self.transientLifetime
        {
            transientKeys.withLock { _ = $0.insert(key) }
            return (data, true)
        }
        let response = try await client.get(
            url, headers: stale?.1.policy.conditionalHeaders ?? [:], accept: { validate($0.body) },
            temporaryRefusal: temporaryRefusal, maxBodyBytes: maxBodyBytes)
        if response.status == 304, let (data, record) = stale {
            store(data, policy: record.policy.renewed(by: CachePolicy(response), response: response), for: key)
            return (data, true)
        }
        try check(response)
        store(response.body, policy: CachePolicy(response), for: key)
        return (response.body, false)
    }

    /// Revalidates a stale entry that is being used meanwhile (`stale-while-revalidate`): a 304 renews it, a whole
    /// new answer replaces it; anything else (a failure, an error answer) leaves it to go out of its window.
    private func revalidateInBackground(
        _ url: URL, key: CacheKey, stale: (Data, Record), client: HTTPClient,
        validate: @escaping @Sendable (Data) -> Bool, maxBodyBytes: Int?
    ) {
        let id = UUID()
        let (data, record) = stale
        revalidations.withLock {
            $0[id] = Task { [self] in
                defer { _ = revalidations.withLock { $0.removeValue(forKey: id) } }
                guard
                    let response = try? await client.get(
                        url, headers: record.policy.conditionalHeaders, accept: { validate($0.body) },
                        maxBodyBytes: maxBodyBytes)
                else { return }
                if response.status == 304 {
                    store(data, policy: record.policy.renewed(by: CachePolicy(response), response: response), for: key)
                } else if response.isSuccess {
                    store(response.body, policy: CachePolicy(response), for: key)
                }
            }
        }
    }

    /// Waits for the background revalidations started so far (`stale-while-revalidate`).
    public func finishRevalidations() async {
        while let task = revalidations.withLock({ $0.values.first }) { await task.value }
    }

    /// Stores bytes downloaded some other way (e.g. a POST) under `key` with the response's policy: kept on disk
    /// (with its lifetime) when the policy allows, transient (for this job, on disk) when it names no lifetime, in
    /// memory only when it may not be written (`no-store`; `private` in a shared cache).
    public func store(_ data: Data, policy: CachePolicy, for key: CacheKey) {
        let shared = cache.shared
        let time = now().timeIntervalSince1970
        guard policy.mayStore(shared: shared) else {
            removeEntry(key)
            removeEntry(transientKey(key))
            transientKeys.withLock { _ = $0.remove(key) }
            memory.withLock { $0.insert(data, record: Record(stored: time - policy.age, policy: policy), for: key) }
            return
        }
        memory.withLock { $0.remove(key) }
        // The record goes first and the bytes after it: a run killed between the two leaves a record without bytes
        // (fetched again), never bytes without their record (which would be taken for an entry kept without one).
        if policy.mayKeep(shared: shared) {
            try? write(Record(stored: time - policy.age, policy: policy), for: key)
            try? cache.store(data, for: key)
            removeEntry(transientKey(key))
            transientKeys.withLock { _ = $0.remove(key) }
        } else {
            removeEntry(key)
            let k = transientKey(key)
            try? write(Record(stored: time, policy: policy), for: k)
            try? cache.store(data, for: k)
            transientKeys.withLock { _ = $0.insert(key) }
        }
    }

    /// Removes `key`'s entry, kept, transient or in memory, with its records (e.g. bytes that turned out not to
    /// decode).
    public func remove(_ key: CacheKey) {
        removeEntry(key)
        removeEntry(transientKey(key))
        memory.withLock { $0.remove(key) }
    }

    private func removeEntry(_ key: CacheKey) {
        cache.remove(key) // the bytes first, then their record (see `store`)
        cache.remove(recordKey(key))
    }

    /// Removes the transient entries this cache stored or reused, and what it held in memory: call when the job
    /// has finished.
    public func discardTransient() {
        let keys = transientKeys.withLock { keys in
            defer { keys.removeAll() }
            return keys
        }
        for key in keys { removeEntry(transientKey(key)) }
        memory.withLock { $0 = MemoryStore(limit: memoryLimit) }
    }

    // MARK: - Entries

    private func transientKey(_ key: CacheKey) -> CacheKey { CacheKey(parts: ["transient"] + key.parts) }
    private func recordKey(_ key: CacheKey) -> CacheKey {
        CacheKey(parts: Array(key.parts.dropLast()) + [(key.parts.last ?? "") + ".http-cache.json"])
    }

    private func record(_ key: CacheKey) -> Record? {
        cache.data(for: recordKey(key)).flatMap { try? JSONDecoder().decode(Record.self, from: $0) }
    }

    private func write(_ record: Record, for key: CacheKey) throws {
        try cache.store(try JSONEncoder().encode(record), for: recordKey(key))
    }

    /// Deletes transient entries older than ``transientLifetime`` (left by runs that were killed).
    private func sweepTransient() {
        let root = cache.directory.appendingPathComponent("transient")
        guard
            let files = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.contentModificationDateKey])
        else { return }
        let limit = now().addingTimeInterval(-Self.transientLifetime)
        for case let url as URL in files {
            guard let date = try? url.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate,
                (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true, date < limit
            else { continue }
            try? FileManager.default.removeItem(at: url)
        }
    }
}
