// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The shared HTTP client: a concurrency limit, retries with exponential backoff and jitter, `Retry-After`,
/// a deadline per attempt, and secrets kept out of every message.
///
/// What is retried: HTTP 429 and 5xx, timeouts (our own deadline), dropped connections and truncated bodies, bodies
/// over the request's size limit, empty 2xx answers (every service Lapse calls answers with content), any
/// response the caller's `accept` check rejects (e.g. a cut-off JPEG), and quota or rate refusals the caller's
/// `temporaryRefusal` recognises. What is not: other 4xx statuses, which are returned to the caller as they are
/// (see ``HTTPResponse/requireSuccess(_:hiding:)``), and a server that cannot be reached at all (a host name that
/// does not resolve, no network, a refused connection) and has not answered this client before, which fails at
/// once so that offline runs end in seconds (a server that answered before and now refuses is retried).
///
/// Every client uses one `URLSession` for the whole process (creating and invalidating many sessions crashes
/// Foundation on Linux). `timeoutIntervalForResource` is ignored on Linux, so the deadline is enforced here by
/// cancelling the task, in turn with the session delegate's calls: FoundationNetworking (swift-corelibs-foundation's
/// `_HTTPURLProtocol`) traps when a task cancelled while it waits for the delegate's redirect decision gets the
/// decision after all, so a task cancelled before its decision was asked never gets one (``Transfers``).
/// Foundation's own timer, which ends a task the same way, is set 300 s past the deadline, as a backstop only. A
/// task cancelled at its deadline holds its connection until its turn on the delegate queue comes (the waiter and
/// its slot are freed at once), so a retry may briefly overlap it.
/// Requests wait for a free slot before each attempt and give it back while they back off, so a server never sees
/// more than ``Configuration/maxConcurrentRequests`` requests of one client at once.
///
/// Redirects are followed within the request's origin (scheme, host and port) as they are. A redirect to another
/// origin is followed without the request's credentials (`Authorization`, `Proxy-Authorization`, `Cookie`,
/// `X-Goog-Api-Key`, and any header whose value holds a configured secret), as curl does since 7.58 (CVE-2018-1000007);
/// one from `https` to `http` is not followed at all (its 3xx is the answer, an error for the caller).
public final class HTTPClient: Sendable {
    /// How a client behaves; the defaults suit public web APIs.
    public struct Configuration: Sendable {
        /// Requests in flight at once, ≥ 1 (default 8).
        public var maxConcurrentRequests: Int = 8
        /// Attempts per request including the first, ≥ 1 (default 5).
        public var maxAttempts: Int = 5
        /// First backoff delay in seconds (default 0.5); doubles with every retry, with full jitter.
        public var baseDelay: Double = 0.5
        /// Longest backoff delay in seconds (default 20).
        public var maxDelay: Double = 20
        /// Longest `Retry-After` honoured, in seconds (default 120); a server asking for more fails the request.
        public var maxRetryAfter: Double = 120
        /// Deadline of one attempt in seconds, from sending to the last byte (default 30).
        public var requestTimeout: Double = 30
        /// Deadline of a request with all its attempts and the waits between them, in seconds from its first
        /// attempt (nil, the default: none beyond ``maxAttempts`` × ``requestTimeout`` and the backoff). Each
        /// attempt gets what is left, at most ``requestTimeout``; no retry starts that could not finish in time.
        public var totalTimeout: Double?
        /// Strings (API keys, tokens) to hide from every error message, and never to send to another origin than
        /// the request's (see ``HTTPClient`` on redirects).
        public var secrets: [String] = []
        /// The largest body accepted, in bytes (default 64 MiB), when a request sets no
        /// ``HTTPRequest/maxBodyBytes`` of its own. A larger answer (by its `Content-Length`, or as its bytes come)
        /// is cut off at once and counts as a failed attempt: no server decides how much memory the client uses.
        public var maxBodyBytes: Int = 64 << 20
        /// `User-Agent` header (default `lapse/VERSION`).
        public var userAgent: String = lapseUserAgent
        /// How the client waits between attempts, in seconds. Tests replace it to record the delays.
        public var sleep: @Sendable (Double) async throws -> Void = { seconds in
            try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
        }

        /// The default configuration (see the properties).
        public init() {}
    }

    /// Counters of what a client did (for tests and summaries).
    public struct Statistics: Sendable, Equatable {
        /// Attempts sent to servers, retries included.
        public var attempts = 0
        /// Attempts that were retries.
        public var retries = 0
        /// Requests that finished with a response returned to the caller.
        public var completed = 0
    }

    /// The client's limits, retries and timeouts.
    public let configuration: Configuration
    private let slots: AsyncSemaphore
    private let counters = Counters()
    /// Hosts (`host:port`) that have answered this client: a refused connection to one of them is a server
    /// restarting or shedding load mid-job, retried like a dropped connection.
    private let reachedHosts = Mutex<Set<String>>([])

    /// A session configuration that stores nothing: no cookies, credentials or URL cache. Foundation on Linux makes
    /// a folder for every URLCache it creates (`~/.cache/org.swift.foundation.URLCache/lapse` for its shared one and
    /// for `.ephemeral`'s), though Lapse caches nothing there (its own cache is `HTTPCache`): the shared one is
    /// replaced first by one of no capacity over the temporary folder, which exists, and `.ephemeral` is not used.
    /// Its shared cookie storage, which any configuration names, makes `~/.local/share/<the executable's folder>`
    /// (`release`, `bin`): the folders it made are removed again while they are empty.
    private static func configuration() -> URLSessionConfiguration {
        _ = noSharedURLCache
        _ = noCookieFolder
        let config = URLSessionConfiguration.default
        config.urlCache = nil
        config.httpCookieStorage = nil
        config.httpShouldSetCookies = false
        config.urlCredentialStorage = nil
        return config
    }

    private static let noSharedURLCache: Void = {
        URLCache.shared = URLCache(memoryCapacity: 0, diskCapacity: 0, diskPath: NSTemporaryDirectory())
    }()

    private static let noCookieFolder: Void = {
        // Where swift-corelibs-foundation's HTTPCookieStorage puts the shared store (HTTPCookieStorage.swift).
        var name = URL(fileURLWithPath: Bundle.main.bundlePath).lastPathComponent
        if let dot = name.lastIndex(of: ".") { name = String(name[..<dot]) }
        let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        guard !name.isEmpty, let folder = support?.appendingPathComponent(name) else { return }
        // The folders it would make (`~/.local`, `~/.local/share` too in a new home), deepest first.
        var made: [String] = []
        var next = folder
        while next.path != "/", !FileManager.default.fileExists(atPath: next.path) {
            made.append(next.path)
            next = next.deletingLastPathComponent()
        }
        _ = HTTPCookieStorage.shared
        for path in made where (try? FileManager.default.contentsOfDirectory(atPath: path))?.isEmpty == true {
            rmdir(path)
        }
    }()

    /// The process's one URLSession, shared by every client; its delegate receives every transfer's bytes.
    static let session: URLSession = {
        let config = configuration()
        config.httpMaximumConnectionsPerHost = 64
        config.urlCache = nil
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.timeoutIntervalForRequest = 600 // our own deadline is shorter; see `perform`
        return URLSession(configuration: config, delegate: transfers, delegateQueue: nil)
    }()

    /// The session of requests with a body (POST), each sent with `Connection: close` so that it never goes on a
    /// connection kept alive from before: libcurl sends a request again by itself when such a connection turns out
    /// dead as it is sent, and Foundation then sends a body given as data empty (the server waits for it until the
    /// deadline). A fresh connection cannot be dead that way; the client's own retries send the body whole.
    static let bodySession: URLSession = {
        let config = configuration()
        config.urlCache = nil
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.timeoutIntervalForRequest = 600
        return URLSession(configuration: config, delegate: transfers, delegateQueue: nil)
    }()

    /// The transfers in flight, keyed by task.
    static let transfers = Transfers()

    /// A client shared by everything that does not need its own settings.
    public static let shared = HTTPClient()

    /// A client with `configuration` (default: the defaults), its own URLSession and concurrency limit.
    public init(configuration: Configuration = Configuration()) {
        var c = configuration
        c.maxConcurrentRequests = max(1, c.maxConcurrentRequests)
        c.maxAttempts = max(1, c.maxAttempts)
        self.configuration = c
        slots = AsyncSemaphore(c.maxConcurrentRequests)
    }

    /// What the client has done so far.
    public var statistics: Statistics { counters.value }

    /// GET `url`.
    /// - Parameters:
    ///   - url: what to get.
    ///   - headers: extra request headers.
    ///   - accept: checks a 2xx response; returning false makes it count as a failed attempt and be retried
    ///     (e.g. a JPEG without its end marker). After the last attempt the request fails.
    ///   - temporaryRefusal: recognises a service's "too many requests / quota" answers that are not HTTP 429
    ///     (Google's 403 `rateLimitExceeded`, the legacy Directions API's `OVER_QUERY_LIMIT` in a 200): returns the
    ///     problem to retry it with backoff, `nil` otherwise. After the last attempt the request fails `.rateLimited`.
    ///   - maxBodyBytes: the largest answer accepted (nil: the configuration's ``Configuration/maxBodyBytes``).
    /// - Returns: the response: 2xx, or a non-retried status (3xx such as 304, 4xx other than 429) for the caller to
    ///   read.
    /// - Throws: ``LapseError`` `.network` (timeouts, connection failures, 5xx after every attempt, rejected bodies; at
    ///   once for a server never reached that cannot be reached), `.rateLimited` (429 or a `temporaryRefusal` after
    ///   every attempt, or a `Retry-After` beyond the limit), `.cancelled`.
    ///   Messages name the URL without its query string and never contain a configured secret.
    public func get(
        _ url: URL, headers: [String: String] = [:], accept: (@Sendable (HTTPResponse) -> Bool)? = nil,
        temporaryRefusal: (@Sendable (HTTPResponse) -> String?)? = nil, maxBodyBytes: Int? = nil
    ) async throws -> HTTPResponse {
        try await send(
            HTTPRequest(url: url, headers: headers, maxBodyBytes: maxBodyBytes), accept: accept,
            temporaryRefusal: temporaryRefusal)
    }

    /// POST a JSON body to `url` (sets `Content-Type: application/json`). Same retries and errors as
    /// ``get(_:headers:accept:temporaryRefusal:maxBodyBytes:)``.
    public func post(
        _ url: URL, json: Data, headers: [String: String] = [:], accept: (@Sendable (HTTPResponse) -> Bool)? = nil,
        temporaryRefusal: (@Sendable (HTTPResponse) -> String?)? = nil, maxBodyBytes: Int? = nil
    ) async throws -> HTTPResponse {
        var h = headers
        h["Content-Type"] = "application/json"
        return try await send(
            HTTPRequest(method: "POST", url: url, headers: h, body: json, maxBodyBytes: maxBodyBytes), accept: accept,
            temporaryRefusal: temporaryRefusal)
    }

    /// POST a value encoded as JSON and decode the JSON answer (2xx required).
    /// - Throws: as ``post(_:json:headers:accept:temporaryRefusal:maxBodyBytes:)``, plus
    ///   ``HTTPResponse/requireSuccess(_:hiding:)``'s errors
    ///   and `.invalidInput` when the answer is not the expected JSON.
    public func postJSON<Body: Encodable, Answer: Decodable>(
        _ url: URL, _ body: Body, as: Answer.Type,
        headers: [String: String] = [:], maxBodyBytes: Int? = nil
    ) async throws -> Answer {
        let data = try JSONEncoder().encode(body)
        let response = try await post(url, json: data, headers: headers, maxBodyBytes: maxBodyBytes)
        try response.requireSuccess(subject(url), hiding: configuration.secrets)
        return try decode(Answer.self, from: response, url: url)
    }

    /// GET `url` and decode its JSON answer (2xx required). Errors as ``postJSON(_:_:as:headers:maxBodyBytes:)``.
    public func getJSON<Answer: Decodable>(
        _ url: URL, as: Answer.Type, headers: [String: String] = [:], maxBodyBytes: Int? = nil
    ) async throws -> Answer {
        let response = try await get(url, headers: headers, maxBodyBytes: maxBodyBytes)
        try response.requireSuccess(subject(url), hiding: configuration.secrets)
        return try decode(Answer.self, from: response, url: url)
    }

    private func decode<Answer: Decodable>(_ type: Answer.Type, from response: HTTPResponse, url: URL) throws -> Answer
    {
        do {
            return try JSONDecoder().decode(Answer.self, from: response.body)
        } catch {
            throw LapseError(.invalidInput, subject(url), "unexpected JSON answer (\(Self.describe(decoding: error)))")
        }
    }

    /// The URL as it may appear in a message: no query string, no secrets.
    public func subject(_ url: URL) -> String {
        Redaction.message(Redaction.url(url.absoluteString), hiding: configuration.secrets)
    }

    /// Sends `request` with retries. See ``get(_:headers:accept:temporaryRefusal:maxBodyBytes:)`` for what is returned
    /// and thrown.
    public func send(
        _ request: HTTPRequest, accept: (@Sendable (HTTPResponse) -> Bool)? = nil,
        temporaryRefusal: (@Sendable (HTTPResponse) -> String?)? = nil
    ) async throws -> HTTPResponse {
        let c = configuration
        // A link a server gave (a Panoramax asset, a next page) may name another scheme: file://, ftp://, data:. It
        // is the server's fault, said once (URLSession would read a local file, or fail it as a retryable error).
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw LapseError(
                .network, subject(request.url),
                "unusable answer (a link to \(request.url.scheme.map { "a \($0):" } ?? "no") URL, not http or https)")
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.setValue(c.userAgent, forHTTPHeaderField: "User-Agent")
        for (k, v) in request.headers { urlRequest.setValue(v, forHTTPHeaderField: k) }
        // Foundation's own timer only backs the deadline up (see ``HTTPClient`` on cancelling): whole seconds, as
        // FoundationNetworking truncates it; far enough past the deadline that a delegate queue stalled by load does
        // not let it fire while a redirect waits for its decision.
        urlRequest.timeoutInterval = (c.requestTimeout + 300).rounded(.up)
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        let limit = request.maxBodyBytes ?? c.maxBodyBytes

        var lastProblem = ""
        var lastCode = LapseError.Code.network
        var lastStatus: Int?
        var attempts = 0
        var giveUp: Date? // from the first attempt on, with a total timeout
        attempting: for attempt in 1...c.maxAttempts {
            if Task.isCancelled { throw LapseError(.cancelled, subject(request.url), "cancelled") }
            await slots.acquire()
            if giveUp == nil, let total = c.totalTimeout { giveUp = Date().addingTimeInterval(total) }
            let left = giveUp.map { $0.timeIntervalSinceNow } ?? .infinity
            counters.update {
                $0.attempts += 1
                if attempt > 1 { $0.retries += 1 }
            }
            attempts = attempt
            let attemptDeadline = min(c.requestTimeout, max(0.05, left))
            let outcome: Outcome
            do {
                let response = try await perform(urlRequest, limit: limit, deadline: attemptDeadline)
                reachedHosts.withLock { _ = $0.insert(Self.hostKey(request.url)) }
                outcome = classify(response, accept: accept, temporaryRefusal: temporaryRefusal)
            } catch let error as AttemptError {
                outcome = .retry(error.reason, after: nil)
            } catch is CancellationError {
                await slots.release()
                throw LapseError(.cancelled, subject(request.url), "cancelled")
            } catch {
                // Nothing to retry when the name does not resolve, there is no network or nothing listens: fail
                // now (offline, every lookup would otherwise wait out its backoff).
                if Self.isUnreachable(error), !reachedHosts.withLock({ $0.contains(Self.hostKey(request.url)) }) {
                    await slots.release()
                    throw LapseError(
                        .network, subject(request.url), Self.describe(transport: error, deadline: attemptDeadline))
                }
                outcome = .retry(Self.describe(transport: error, deadline: attemptDeadline), after: nil)
            }
            await slots.release()
            switch outcome {
            case .done(let response):
                counters.update { $0.completed += 1 }
                return response
            case .retry(let problem, let retryAfter, let rateLimited, let status):
                lastProblem = problem
                lastCode = rateLimited ? .rateLimited : .network
                lastStatus = status
                guard attempt < c.maxAttempts else { break }
                var delay = Self.backoff(attempt: attempt, base: c.baseDelay, cap: c.maxDelay)
                if let retryAfter {
                    guard retryAfter <= c.maxRetryAfter else {
                        throw LapseError(
                            .rateLimited, subject(request.url),
                            "server asks to retry after \(Int(retryAfter)) s (\(problem))",
                            cause: status.map(LapseError.Cause.http))
                    }
                    if let giveUp, giveUp.timeIntervalSinceNow < retryAfter + 0.05 {
                        let left = max(0, giveUp.timeIntervalSinceNow)
                        throw LapseError(
                            .rateLimited, subject(request.url),
                            "server asks to retry after \(Self.format(retryAfter)) s, more than the "
                                + "\(Self.format((left * 10).rounded() / 10)) s left of the timeout (\(problem))",
                            cause: status.map(LapseError.Cause.http))
                    }
                    delay = max(retryAfter, delay * 0.25)
                }
                // No time left for another attempt after the wait: give up now.
                if let giveUp, giveUp.timeIntervalSinceNow < delay + 0.05 { break attempting }
                do { try await c.sleep(delay) } catch {
                    throw LapseError(.cancelled, subject(request.url), "cancelled")
                }
            }
        }
        let reason = attempts == 1 ? lastProblem : "\(lastProblem) (after \(attempts) attempts)"
        throw LapseError(
            lastCode, subject(request.url),
            Redaction.message(reason, hiding: c.secrets + Self.querySecrets(request.url)),
            cause: lastStatus.map(LapseError.Cause.http))
    }

    /// The values of a URL's query parameters that hold credentials (`key`, `session`, `token`, `access_token`,
    /// `sig`, `signature`): a server's message may repeat them (a Map Tiles session token in a 403's text).
    public static func querySecrets(_ url: URL) -> [String] {
        let names: Set = ["key", "session", "token", "access_token", "sig", "signature"]
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return items.filter { names.contains($0.name.lowercased()) }.compactMap(\.value)
    }

    private enum Outcome {
        case done(HTTPResponse)
        case retry(String, after: Double?, rateLimited: Bool = false, status: Int? = nil)
    }

    private func classify(
        _ response: HTTPResponse, accept: (@Sendable (HTTPResponse) -> Bool)?,
        temporaryRefusal: (@Sendable (HTTPResponse) -> String?)?
    ) -> Outcome {
        let s = response.status
        let retryAfter = response.header("Retry-After").flatMap(Self.parseRetryAfter)
        if s == 429 || (500...599).contains(s) {
            return .retry("HTTP \(s)", after: retryAfter, rateLimited: s == 429, status: s)
        }
        if let temporaryRefusal, let problem = temporaryRefusal(response) {
            return .retry(problem, after: retryAfter, rateLimited: true, status: s)
        }
        if response.isSuccess, response.status != 204, response.body.isEmpty {
            return .retry("empty answer (HTTP \(s) with no body)", after: nil, status: s)
        }
        if response.isSuccess, let accept, !accept(response) {
            return .retry("incomplete or invalid body (\(response.body.count) bytes)", after: nil)
        }
        if response.isSuccess, let expected = response.header("Content-Length").flatMap(Int.init),
            response.header("Content-Encoding") == nil, expected != response.body.count
        {
            return .retry("truncated body (\(response.body.count) of \(expected) bytes)", after: nil)
        }
        return .done(response)
    }

    /// Exponential backoff with full jitter: a random delay in [0.5, 1] × min(cap, base × 2^(attempt−1)).
    static func backoff(attempt: Int, base: Double, cap: Double) -> Double {
        let ceiling = min(cap, base * pow(2, Double(attempt - 1)))
        return ceiling * Double.random(in: 0.5...1)
    }

    /// `Retry-After` as seconds: either a number of seconds or an HTTP date (RFC 9110 §10.2.3).
    static func parseRetryAfter(_ value: String) -> Double? {
        let v = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(v), seconds.isFinite, seconds >= 0 { return seconds }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = f.date(from: v) else { return nil }
        return max(0, date.timeIntervalSinceNow)
    }

    /// One attempt, bounded by `deadline` seconds and `limit` bytes of body whatever the server does.
    private func perform(_ request: URLRequest, limit: Int, deadline: Double) async throws -> HTTPResponse {
        let box = OneShot()
        // A request with a body goes on a connection of its own (see ``bodySession``).
        var request = request
        let session = request.httpBody == nil ? Self.session : Self.bodySession
        if request.httpBody != nil { request.setValue("close", forHTTPHeaderField: "Connection") }
        let secrets = configuration.secrets
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                guard box.set(continuation) else { return } // already cancelled: send nothing
                let task = session.dataTask(with: request)
                Self.transfers.begin(task, Transfer(limit: limit, secrets: secrets, box: box))
                box.attach(task) { Self.transfers.cancel($0, in: session) }
                task.resume()
                DispatchQueue.global().asyncAfter(deadline: .now() + deadline) {
                    box.finish(
                        .failure(AttemptError(reason: "timed out after \(Self.format(deadline)) s")), cancelTask: true)
                }
            }
        } onCancel: {
            box.finish(.failure(CancellationError()), cancelTask: true)
        }
    }

    /// Seconds in messages: `0.4`, `30` (to the hundredth).
    static func format(_ seconds: Double) -> String { NumberText.compact(seconds, digits: 2) }

    static func hostKey(_ url: URL) -> String { "\(url.host ?? ""):\(url.port ?? -1)" }

    /// Whether `error` says the server cannot be reached at all: the host name does not resolve, the machine is
    /// offline, or the connection was refused.
    static func isUnreachable(_ error: any Error) -> Bool {
        guard let u = error as? URLError else { return false }
        return [.cannotFindHost, .dnsLookupFailed, .notConnectedToInternet, .cannotConnectToHost].contains(u.code)
    }

    private static func describe(transport error: any Error, deadline: Double) -> String {
        if let u = error as? URLError {
            switch u.code {
            case .timedOut: return "timed out after \(Self.format(deadline)) s"
            case .cannotConnectToHost: return "connection refused (is the server running and the URL right?)"
            case .networkConnectionLost: return "connection lost"
            case .cannotFindHost, .dnsLookupFailed: return "host not found (offline, or a wrong URL?)"
            case .notConnectedToInternet: return "not connected to the internet"
            default: return "network error \(u.code.rawValue)"
            }
        }
        return "network error (\((error as NSError).localizedDescription))"
    }

    private static func describe(decoding error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let ctx), DecodingError.valueNotFound(_, let ctx):
            return "bad value at \(ctx.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.dataCorrupted: return "not JSON"
        default: return "\(error)"
        }
    }
}

/// A failed attempt that may be retried.
struct AttemptError: Error { var reason: String }

/// One transfer's state: its limit, the bytes so far, and who waits for them.
struct Transfer {
    /// The most body bytes accepted.
    var limit: Int
    /// Values never sent to another origin.
    var secrets: [String]
    /// Resumed once with the response or the failure.
    var box: OneShot
    var response: HTTPURLResponse?
    var body = Data()

    init(limit: Int, secrets: [String], box: OneShot) {
        self.limit = limit
        self.secrets = secrets
        self.box = box
    }
}

/// The delegate of the process's one `URLSession`: collects each task's body up to its limit, decides what a
/// redirect may carry (see ``HTTPClient``), and cancels tasks.
///
/// Cancelling safely: FoundationNetworking asks the delegate about a redirect from the task's work queue and waits for
/// the answer in a state of its own; a task cancelled in that state and answered after is a trap
/// (`didCompleteRedirectCallback`: "we're not waiting for it"). Its delegate queue is serial, and both the question
/// and ``cancel(_:in:)`` go through it, so one comes before the other: asked first, the answer is queued on the work
/// queue before the cancellation is; cancelled first, the task is forgotten, and its question, if it comes, is left
/// unanswered (the cancelled task is already complete and never reads it).
final class Transfers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: NSObject is not Sendable; the only state is `inFlight`, under its Mutex.
    private let inFlight = Mutex<[ObjectIdentifier: Transfer]>([:])

    /// Headers that carry credentials, dropped on a redirect to another origin (lower-cased).
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "x-goog-api-key"]

    func begin(_ task: URLSessionTask, _ transfer: Transfer) {
        inFlight.withLock { $0[ObjectIdentifier(task)] = transfer }
    }

    /// Cancels `task` (whose waiter was already given its result): forgets its transfer on `session`'s delegate queue,
    /// in turn with the delegate's calls, then cancels it (see ``Transfers``).
    func cancel(_ task: URLSessionTask, in session: URLSession) {
        session.delegateQueue.addOperation { [self] in
            _ = inFlight.withLock { $0.removeValue(forKey: ObjectIdentifier(task)) }
            Self.cancelForgotten(task)
        }
    }

    /// Cancels a task whose transfer is forgotten, off the delegate queue: `cancel()` waits for the task's work
    /// queue, which a transfer streaming at full speed keeps busy, and the delegate queue serves every transfer.
    /// Forgotten first, the task gets no answer to a question asked after this, wherever `cancel()` then runs.
    private static func cancelForgotten(_ task: URLSessionTask) {
        DispatchQueue.global().async { task.cancel() }
    }

    /// Ends `task`'s transfer with `result` (at most once) and forgets it; `cancel` cancels the task too. Every
    /// caller is a delegate call, on the delegate queue (see ``Transfers``).
    private func end(_ task: URLSessionTask, _ result: Result<HTTPResponse, any Error>, cancel: Bool = false) {
        guard let transfer = inFlight.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        if cancel { Self.cancelForgotten(task) }
        transfer.box.finish(result)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        let declared = http?.value(forHTTPHeaderField: "Content-Length").flatMap { Int($0) }
        let limit = inFlight.withLock { state -> Int? in
            state[ObjectIdentifier(dataTask)]?.response = http
            return state[ObjectIdentifier(dataTask)]?.limit
        }
        if let limit, let declared, declared > limit {
            completionHandler(.cancel) // FoundationNetworking ignores it: the task is cancelled by `end`
            end(dataTask, .failure(AttemptError(reason: Self.tooLarge(declared, limit))), cancel: true)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let over = inFlight.withLock { state -> (Int, Int)? in
            guard var t = state[ObjectIdentifier(dataTask)] else { return nil }
            // Past the limit: nothing more is kept, the transfer ends below.
            guard t.body.count + data.count <= t.limit else { return (t.body.count + data.count, t.limit) }
            state[ObjectIdentifier(dataTask)] = nil
            t.body.append(data)
            state[ObjectIdentifier(dataTask)] = t
            return nil
        }
        if let (count, limit) = over {
            end(dataTask, .failure(AttemptError(reason: Self.tooLarge(count, limit, atLeast: true))), cancel: true)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            end(task, .failure(error))
            return
        }
        let taken = inFlight.withLock { $0[ObjectIdentifier(task)] }
        guard let http = taken?.response ?? task.response as? HTTPURLResponse else {
            end(task, .failure(AttemptError(reason: "no HTTP response")))
            return
        }
        var headers: [String: String] = [:]
        for (k, v) in http.allHeaderFields {
            if let k = k as? String { headers[k.lowercased()] = "\(v)" }
        }
        end(task, .success(HTTPResponse(status: http.statusCode, headers: headers, body: taken?.body ?? Data())))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // A task cancelled before this question came is not answered (see ``Transfers``).
        guard let secrets = inFlight.withLock({ $0[ObjectIdentifier(task)]?.secrets }) else { return }
        completionHandler(Self.redirect(from: task.originalRequest, to: request, secrets: secrets))
    }

    /// The request to send for a redirect from `original` to `next`: as it is within one origin; without
    /// credentials to another; nil (not followed) from `https` to `http`.
    static func redirect(from original: URLRequest?, to next: URLRequest, secrets: [String]) -> URLRequest? {
        guard let from = original?.url, let to = next.url else { return nil }
        func origin(_ u: URL) -> String {
            let scheme = (u.scheme ?? "").lowercased()
            let port = u.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
            return "\(scheme)://\((u.host ?? "").lowercased()):\(port)"
        }
        if origin(from) == origin(to) { return next }
        if from.scheme?.lowercased() == "https" && to.scheme?.lowercased() != "https" { return nil }
        var stripped = next
        for (name, value) in next.allHTTPHeaderFields ?? [:]
        where credentialHeaders.contains(name.lowercased())
            || secrets.contains(where: { !$0.isEmpty && value.contains($0) })
        {
            stripped.setValue(nil, forHTTPHeaderField: name)
        }
        // A secret in the new URL itself (a server that echoes the query string) is not sent either.
        if secrets.contains(where: { !$0.isEmpty && to.absoluteString.contains($0) }) { return nil }
        return stripped
    }

    static func tooLarge(_ count: Int, _ limit: Int, atLeast: Bool = false) -> String {
        "answer of \(atLeast ? "more than " : "")\(count) bytes, more than the \(limit) expected"
    }
}

/// Resumes a continuation exactly once, from the completion handler, the deadline or cancellation, and has the task
/// cancelled (by the canceller ``attach(_:cancel:)`` gave: ``Transfers/cancel(_:in:)``) when the deadline or a
/// cancellation ends it.
final class OneShot: Sendable {
    private struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        /// Cancels the attached task (nil until one is attached).
        var cancelTask: (@Sendable () -> Void)?
        var done = false
        var pendingCancel = false
    }
    private let state = Mutex(State())

    /// Stores the continuation; false (and the continuation resumed with a cancellation) when already cancelled.
    func set(_ c: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
        let stored = state.withLock { s in
            if s.done { return false } // cancelled before the continuation existed
            s.continuation = c
            return true
        }
        if !stored { c.resume(throwing: CancellationError()) }
        return stored
    }

    /// The task, and how to cancel it; cancelled at once when the waiter was ended with a cancellation before.
    func attach(_ t: URLSessionDataTask, cancel: @escaping @Sendable (URLSessionDataTask) -> Void) {
        let cancelNow = state.withLock { s in
            s.cancelTask = { cancel(t) }
            return s.pendingCancel
        }
        if cancelNow { cancel(t) }
    }

    func finish(_ result: Result<HTTPResponse, any Error>, cancelTask: Bool = false) {
        let taken = state.withLock { s -> (CheckedContinuation<HTTPResponse, any Error>?, (@Sendable () -> Void)?)? in
            guard !s.done else { return nil }
            s.done = true
            let c = s.continuation
            s.continuation = nil
            if cancelTask && s.cancelTask == nil { s.pendingCancel = true }
            return (c, s.cancelTask)
        }
        guard let (c, cancel) = taken else { return }
        if cancelTask { cancel?() }
        c?.resume(with: result)
    }
}

/// Lock-protected statistics.
private final class Counters: Sendable {
    private let stats = Mutex(HTTPClient.Statistics())
    var value: HTTPClient.Statistics { stats.withLock { $0 } }
    func update(_ f: (inout HTTPClient.Statistics) -> Void) { stats.withLock { f(&$0) } }
}

/// A counting semaphore for async code: at most `limit` holders at once, waiters served in order.
actor AsyncSemaphore {
    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(_ limit: Int) { available = limit }

    func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty { available += 1 } else { waiters.removeFirst().resume() }
    }
}
