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

    public init(maxAge: Double? = nil, noStore: Bool = false, etag: String? = nil) {
        self.maxAge = maxAge
        self.noStore = noStore
        self.etag = etag
    }

    /// The policy of `response`. `private` allows our cache (it is the user's own); `no-cache` is `max-age=0`.
    public init(_ response: HTTPResponse) {
        var maxAge: Double?
        var noStore = false
        for directive in (response.header("Cache-Control") ?? "").split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            switch parts.first {
            case "no-store": noStore = true
            case "no-cache": maxAge = 0
            case "max-age":
                if parts.count == 2, let seconds = Double(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))), seconds >= 0 {
                    maxAge = maxAge == 0 ? 0 : seconds
                }
            default: break
            }
        }
        self.init(maxAge: maxAge, noStore: noStore, etag: response.header("ETag"))
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
/// - Entries stored without a policy (by older versions) count as stale without an ETag: fetched again.
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
    ///   - check: turns an error answer into the caller's error (called for every non-2xx, non-304 answer).
    /// - Returns: the bytes and whether no download was needed (fresh, or revalidated with 304).
    /// - Throws: the client's errors and `check`'s.
    public func get(_ url: URL, key: CacheKey, client: HTTPClient, validate: @escaping @Sendable (Data) -> Bool,
                    temporaryRefusal: (@Sendable (HTTPResponse) -> String?)? = nil,
                    check: (HTTPResponse) throws -> Void) async throws -> (data: Data, fromCache: Bool) {
        var stale: (Data, Record)?
        for (k, transient) in [(key, false), (transientKey(key), true)] {
            guard let data = cache.data(for: k, validate: validate) else { continue }
            guard let record = record(k) else { continue }
            let age = now().timeIntervalSince1970 - record.stored
            if transient {
                if age < Self.transientLifetime { transientKeys.withLock { _ = $0.insert(key) }; return (data, true) }
                continue
            }
            if let maxAge = record.policy.maxAge, age < maxAge { return (data, true) }
            if record.policy.etag != nil { stale = (data, record) }
        }
        var headers: [String: String] = [:]
        if let etag = stale?.1.policy.etag { headers["If-None-Match"] = etag }
        let response = try await client.get(url, headers: headers,
                                            accept: { $0.status == 304 || validate($0.body) },
                                            temporaryRefusal: temporaryRefusal)
        if response.status == 304, let (data, record) = stale {
            var policy = CachePolicy(response)
            if policy.etag == nil { policy.etag = record.policy.etag }
            if policy.maxAge == nil { policy.maxAge = record.policy.maxAge }
            try? write(Record(stored: now().timeIntervalSince1970, policy: policy), for: key)
            return (data, true)
        }
        try check(response)
        store(response.body, policy: CachePolicy(response), for: key)
        return (response.body, false)
    }

    /// Stores bytes downloaded some other way (e.g. a POST) under `key` with the response's policy.
    public func store(_ data: Data, policy: CachePolicy, for key: CacheKey) {
        if policy.mayKeep {
            try? cache.store(data, for: key)
            try? write(Record(stored: now().timeIntervalSince1970, policy: policy), for: key)
            cache.remove(transientKey(key))
        } else {
            let k = transientKey(key)
            try? cache.store(data, for: k)
            try? write(Record(stored: now().timeIntervalSince1970, policy: policy), for: k)
            transientKeys.withLock { _ = $0.insert(key) }
        }
    }

    /// Removes the transient entries this cache stored or reused: call when the job has finished.
    public func discardTransient() {
        let keys = transientKeys.withLock { keys in defer { keys.removeAll() }; return keys }
        for key in keys {
            cache.remove(transientKey(key))
            cache.remove(recordKey(transientKey(key)))
        }
    }

    /// How many transient entries this cache holds for the job.
    public var transientCount: Int { transientKeys.withLock { $0.count } }

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
        guard let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.contentModificationDateKey]) else { return }
        let limit = now().addingTimeInterval(-Self.transientLifetime)
        for case let url as URL in files {
            guard let date = try? url.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate,
                  (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true, date < limit else { continue }
            try? FileManager.default.removeItem(at: url)
        }
    }
}
