// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import Synchronization

/// What a response allows a private cache to do with it, from its `Cache-Control` and `ETag` headers (RFC 9111
/// §5.2.2: `max-age`, `no-store`, `no-cache`, `private`; RFC 9110 §8.8.3 `ETag`).
public struct CachePolicy: Sendable, Equatable, Codable {
    /// Seconds the response stays fresh; `nil` when the response gives no lifetime (no permission to keep it).
    public var maxAge: Double?
    /// `no-store`: not to be kept beyond the job that asked for it.
    public var noStore: Bool
    /// The entity tag, for revalidation with `If-None-Match`.
    public var etag: String?
    /// The response's `Age` in seconds: how long it had already been in a shared cache (RFC 9111 §5.1), taken off
    /// its lifetime.
    public var age: Double

    public init(maxAge: Double? = nil, noStore: Bool = false, etag: String? = nil, age: Double = 0) {
        self.maxAge = maxAge
        self.noStore = noStore
        self.etag = etag
        self.age = age
    }

    /// The policy of `response`. `private` allows our cache (it is the user's own); `no-cache` is `max-age=0`.
    public init(_ response: HTTPResponse) {
        var maxAge: Double?
        var noStore = false
        for directive in (response.header("Cache-Control") ?? "").split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            switch parts.first {
            case "no-store": noStore = true
            case "no-cache": maxAge = 0
            case "max-age":
                if parts.count == 2,
                    let seconds = Double(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))),
                    seconds >= 0
                {
                    maxAge = maxAge == 0 ? 0 : seconds
                }
            default: break
            }
        }
        let age =
            response.header("Age").flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }.map { max(0, $0) } ?? 0
        self.init(maxAge: maxAge, noStore: noStore, etag: response.header("ETag"), age: age)
    }

    /// Whether the response may be kept after the job: it names a lifetime (`max-age`, 0 for `no-cache`: kept but
    /// revalidated before every use) and is not `no-store`.
    public var mayKeep: Bool { !noStore && maxAge != nil }
}

/// Downloads through a ``DiskCache`` the way HTTP caching says (RFC 9111), for content whose terms require it
/// (Google's Map Tiles policies: honour `Cache-Control` and `ETag`).
///
/// - A response that may be kept (``CachePolicy/mayKeep``) is stored with its policy and the time it was stored;
///   while fresh (`age < max-age`) it is used without a request; once stale it is revalidated with
///   `If-None-Match` (304 keeps the bytes and renews the lifetime) or, without an ETag, fetched again.
/// - A response without permission to be kept (`no-store`, or no `Cache-Control` lifetime) is stored as **transient**:
///   only for the job, so that a rerun after a crash resumes. ``discardTransient()`` removes what this process stored
///   when the job has finished; leftovers of killed runs are removed by the next run once older than
///   ``transientLifetime``.
/// - Entries stored without a policy (by older versions), and stale ones without an ETag, are deleted and fetched
///   again; an `Age` header shortens the lifetime by the time the answer already spent in a shared cache.
public final class HTTPCache: Sendable {
    /// How long a transient entry may be reused by a rerun after a crash, in seconds (1 hour).
    public static let transientLifetime: Double = 3600

    public let cache: DiskCache
    /// The clock (tests move it forward to make entries stale).
    private let now: @Sendable () -> Date
    private let transientKeys = Mutex<Set<CacheKey>>([])

    private struct Record: Codable {
        var stored: Double
        var policy: CachePolicy
    }

    public init(cache: DiskCache, now: @escaping @Sendable () -> Date = { Date() }) {
        self.cache = cache
        self.now = now
        sweepTransient()
    }

    /// The bytes for `key`: from the cache when fresh, after a revalidation when stale, else downloaded.
    /// - Parameters:
    ///   - url: where the content lives.
    ///   - validate: whether cached or downloaded bytes are whole (e.g. ``CacheValidation/jpeg(_:)``).
    ///   - maxBodyBytes: the largest answer accepted (see
    ///     ``HTTPClient/get(_:headers:accept:temporaryRefusal:maxBodyBytes:)``).
    ///   - check: throws the caller's error for an answer that is not content (called for every answer but a 304
    ///     that revalidates an entry; a 2xx must pass through it unchanged).
    /// - Returns: the bytes and whether no download was needed (fresh, or revalidated with 304).
    /// - Throws: the client's errors and `check`'s.
    public func get(
        _ url: URL, key: CacheKey, client: HTTPClient, validate: @escaping @Sendable (Data) -> Bool,
        temporaryRefusal: (@Sendable (HTTPResponse) -> String?)? = nil, maxBodyBytes: Int? = nil,
        check: (HTTPResponse) throws -> Void
    ) async throws -> (data: Data, fromCache: Bool) {
        var stale: (Data, Record)?
        if let data = cache.data(for: key, validate: validate) {
            if let record = record(key) {
                let age = now().timeIntervalSince1970 - record.stored
                if let maxAge = record.policy.maxAge, age < maxAge { return (data, true) }
                if record.policy.etag != nil { stale = (data, record) } else { remove(key) }
            } else {
                remove(key) // kept by a version that did not honour Cache-Control
            }
        }
        let transient = transientKey(key)
        if stale == nil, let data = cache.data(for: transient, validate: validate), let record = record(transient),
            now().timeIntervalSince1970 - record.stored < Self.transientLifetime
        {
            transientKeys.withLock { _ = $0.insert(key) }
            return (data, true)
        }
        var headers: [String: String] = [:]
        if let etag = stale?.1.policy.etag { headers["If-None-Match"] = etag }
        let response = try await client.get(
            url, headers: headers, accept: { validate($0.body) },
            temporaryRefusal: temporaryRefusal, maxBodyBytes: maxBodyBytes)
        if response.status == 304, let (data, record) = stale {
            var policy = CachePolicy(response)
            if policy.etag == nil { policy.etag = record.policy.etag }
            if policy.maxAge == nil && !policy.noStore { policy.maxAge = record.policy.maxAge }
            store(data, policy: policy, for: key)
            return (data, true)
        }
        try check(response)
        store(response.body, policy: CachePolicy(response), for: key)
        return (response.body, false)
    }

    /// Stores bytes downloaded some other way (e.g. a POST) under `key` with the response's policy: kept (with its
    /// lifetime) when the policy allows, else transient, for this job only.
    public func store(_ data: Data, policy: CachePolicy, for key: CacheKey) {
        let stored = now().timeIntervalSince1970 - policy.age
        // The record goes first and the bytes after it: a run killed between the two leaves a record without bytes
        // (fetched again), never bytes without their record (which would be taken for an entry kept without one).
        if policy.mayKeep {
            try? write(Record(stored: stored, policy: policy), for: key)
            try? cache.store(data, for: key)
            removeEntry(transientKey(key))
            transientKeys.withLock { _ = $0.remove(key) }
        } else {
            removeEntry(key)
            let k = transientKey(key)
            try? write(Record(stored: now().timeIntervalSince1970, policy: policy), for: k)
            try? cache.store(data, for: k)
            transientKeys.withLock { _ = $0.insert(key) }
        }
    }

    /// Removes `key`'s entry, kept or transient, with its records (e.g. bytes that turned out not to decode).
    public func remove(_ key: CacheKey) {
        removeEntry(key)
        removeEntry(transientKey(key))
    }

    private func removeEntry(_ key: CacheKey) {
        cache.remove(key) // the bytes first, then their record (see `store`)
        cache.remove(recordKey(key))
    }

    /// Removes the transient entries this cache stored or reused: call when the job has finished.
    public func discardTransient() {
        let keys = transientKeys.withLock { keys in
            defer { keys.removeAll() }; return keys
        }
        for key in keys { removeEntry(transientKey(key)) }
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
