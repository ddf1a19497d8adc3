// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import TestSupport
import Testing

@testable import LapseNet

/// Records the delays the client asks for, and waits only a millisecond.
final class DelayRecorder: @unchecked Sendable {
    // @unchecked: `values` only touched under `lock`.
    private let lock = NSLock()
    private var values: [Double] = []
    var delays: [Double] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
    var sleep: @Sendable (Double) async throws -> Void {
        { [self] s in
            record(s)
            try await Task.sleep(nanoseconds: 1_000_000)
        }
    }
    private func record(_ s: Double) {
        lock.lock()
        values.append(s)
        lock.unlock()
    }
}

struct ServerStats: Decodable {
    var total: Int
    var maxInFlight: Int
    var byPath: [String: Int]
    enum CodingKeys: String, CodingKey {
        case total
        case maxInFlight = "max_in_flight"
        case byPath = "by_path"
    }
}

func stats(_ server: LocalServer) async throws -> ServerStats {
    try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/stats")!, as: ServerStats.self)
}

func client(
    limit: Int = 8, attempts: Int = 5, timeout: Double = 5, total: Double? = nil, recorder: DelayRecorder? = nil,
    secrets: [String] = []
) -> HTTPClient {
    var c = HTTPClient.Configuration()
    c.maxConcurrentRequests = limit
    c.maxAttempts = attempts
    c.requestTimeout = timeout
    c.totalTimeout = total
    c.secrets = secrets
    if let recorder { c.sleep = recorder.sleep }
    return HTTPClient(configuration: c)
}

@Suite struct HTTPClientTests {
    @Test func getReturnsStatusHeadersAndBody() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let r = try await client().get(URL(string: server.baseURL + "/bytes/70000")!)
        #expect(r.status == 200)
        #expect(r.body.count == 70000)
        #expect(r.body[250] == 250 && r.body[251] == 0)
        #expect(r.header("content-length") == "70000")
        #expect(r.header("Content-Type") == "application/octet-stream")
    }

    @Test func postJSONRoundTrips() async throws {
        struct Body: Codable, Equatable {
            var mapType: String
            var locations: [Double]
        }
        let server = try LocalServer(script: "net_standin.py")
        let sent = Body(mapType: "streetview", locations: [55.7, 13.19])
        let back = try await client().postJSON(URL(string: server.baseURL + "/echo")!, sent, as: Body.self)
        #expect(back == sent)
    }

    @Test(arguments: [500, 502, 503, 429])
    func retriesServerErrorsAndRateLimits(code: Int) async throws {
        let server = try LocalServer(script: "net_standin.py")
        let recorder = DelayRecorder()
        let r = try await client(recorder: recorder).get(URL(string: server.baseURL + "/flaky/a?fail=3&code=\(code)")!)
        #expect(r.status == 200 && r.body.count == 1000)
        #expect(recorder.delays.count == 3)
        let s = try await stats(server)
        #expect(s.byPath["/flaky/a"] == 4)
    }

    @Test func backoffGrowsExponentiallyWithJitter() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let recorder = DelayRecorder()
        var c = HTTPClient.Configuration()
        c.baseDelay = 1
        c.maxDelay = 6
        c.sleep = recorder.sleep
        c.maxAttempts = 5
        _ = try await HTTPClient(configuration: c).get(URL(string: server.baseURL + "/flaky/b?fail=4")!)
        let d = recorder.delays
        try #require(d.count == 4)
        // Ceilings 1, 2, 4, 6 (capped); jitter keeps each in [0.5, 1] × ceiling.
        for (delay, ceiling) in zip(d, [1.0, 2, 4, 6]) {
            #expect(delay >= ceiling * 0.5 && delay <= ceiling)
        }
    }

    @Test func honoursRetryAfter() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let recorder = DelayRecorder()
        // A long deadline: an attempt timed out on a loaded machine would be retried after a backoff, not Retry-After.
        let r = try await client(timeout: 120, recorder: recorder).get(
            URL(string: server.baseURL + "/flaky/c?fail=2&code=429&retry_after=7")!)
        #expect(r.status == 200)
        #expect(recorder.delays == [7, 7])
    }

    @Test func retryAfterBeyondTheLimitFails() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let recorder = DelayRecorder()
        await #expect {
            _ = try await client(recorder: recorder).get(URL(string: server.baseURL + "/status/429?retry_after=3600")!)
        } throws: { error in
            (error as? LapseError)?.code == .rateLimited && "\(error)".contains("3600")
        }
        #expect(recorder.delays.isEmpty)
    }

    @Test func retryAfterAsHTTPDate() {
        let date = Date().addingTimeInterval(30)
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let seconds = HTTPClient.parseRetryAfter(f.string(from: date))
        #expect(seconds != nil && seconds! > 25 && seconds! <= 30)
        #expect(HTTPClient.parseRetryAfter("12") == 12)
        #expect(HTTPClient.parseRetryAfter("soon") == nil)
    }

    @Test(arguments: [400, 401, 403, 404])
    func otherClientErrorsAreNotRetried(code: Int) async throws {
        let server = try LocalServer(script: "net_standin.py")
        let recorder = DelayRecorder()
        let r = try await client(recorder: recorder).get(URL(string: server.baseURL + "/status/\(code)")!)
        #expect(r.status == code)
        #expect(recorder.delays.isEmpty)
        #expect(try await stats(server).total == 1)
        let error = try #require(throws: LapseError.self) { try r.requireSuccess("svc") }
        #expect(error.cause == .http(code))
    }

    @Test func exhaustedRetriesThrowWithoutTheKey() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let key = "AIzaSECRETKEY123"
        let recorder = DelayRecorder()
        let c = client(attempts: 3, recorder: recorder, secrets: [key])
        await #expect {
            _ = try await c.get(
                URL(string: server.baseURL + "/status/503?key=\(key)")!, headers: ["X-Goog-Api-Key": key])
        } throws: { error in
            let text = "\(error)"
            return (error as? LapseError)?.code == .network && (error as? LapseError)?.cause == .http(503)
                && !text.contains(key) && text.contains("HTTP 503")
                && text.contains("/status/503") && text.contains("3 attempts")
        }
        #expect(try await stats(server).total == 3)
    }

    @Test func deadlineCutsStalledResponses() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let recorder = DelayRecorder()
        await #expect {
            _ = try await client(attempts: 2, timeout: 0.4, recorder: recorder).get(
                URL(string: server.baseURL + "/stall?seconds=30")!)
        } throws: { error in
            (error as? LapseError)?.code == .network && "\(error)".contains("timed out")
        }
        #expect(recorder.delays.count == 1)
    }

    /// A total deadline bounds the request with its retries: a stalled first attempt gets the whole of it (well
    /// under the per-attempt deadline), and no retry follows that could not finish in time.
    @Test func totalTimeoutBoundsTheRetries() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let recorder = DelayRecorder()
        let http = client(attempts: 5, timeout: 20, total: 0.4, recorder: recorder)
        await #expect {
            _ = try await http.get(URL(string: server.baseURL + "/stall?seconds=30")!)
        } throws: { error in
            (error as? LapseError)?.code == .network && "\(error)".hasSuffix("timed out after 0.4 s")
        }
        #expect(http.statistics.attempts == 1 && recorder.delays.isEmpty)
    }

    @Test func stalledAttemptIsRetried() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let r = try await client(timeout: 2, recorder: DelayRecorder())
            .get(URL(string: server.baseURL + "/flaky/d?fail=1&mode=stall&stall=8")!)
        #expect(r.status == 200 && r.body.count == 1000)
    }

    @Test func truncatedBodyIsRetried() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let r = try await client(recorder: DelayRecorder()).get(
            URL(string: server.baseURL + "/flaky/e?fail=2&mode=truncate")!)
        #expect(r.status == 200 && r.body.count == 1000)
        #expect(try await stats(server).byPath["/flaky/e"] == 3)
    }

    @Test func rejectedBodyIsRetried() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let c = client(attempts: 3, recorder: DelayRecorder())
        await #expect(throws: LapseError.self) {
            _ = try await c.get(URL(string: server.baseURL + "/bytes/10")!, accept: { $0.body.count > 10 })
        }
        #expect(try await stats(server).total == 3)
    }

    @Test func neverMoreThanTheLimitInFlight() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let c = client(limit: 3)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<24 {
                group.addTask { try await c.get(URL(string: server.baseURL + "/slow?ms=40")!).status }
            }
            for try await status in group { #expect(status == 200) }
        }
        let s = try await stats(server)
        #expect(s.total == 24)
        #expect(s.maxInFlight <= 3)
        #expect(s.maxInFlight >= 2) // requests did run in parallel
    }

    @Test func refusedConnectionFailsClearly() async throws {
        let c = client(attempts: 2, recorder: DelayRecorder())
        await #expect {
            _ = try await c.get(URL(string: "http://127.0.0.1:9/nothing?key=abcdef")!)
        } throws: { error in
            let text = "\(error)"
            return (error as? LapseError)?.code == .network && !text.contains("abcdef")
                && text.contains("127.0.0.1:9/nothing")
        }
    }

    /// Offline, or a wrong host: one attempt, no backoff, an error that says so (an offline run ends in seconds).
    @Test func unreachableServersAreNotRetried() async throws {
        for (url, text) in [
            ("http://lapse-offline.invalid/search?key=abcdef", "host not found"),
            ("http://127.0.0.1:9/search?key=abcdef", "connection refused")
        ] {
            let recorder = DelayRecorder()
            let c = client(attempts: 5, recorder: recorder)
            let error = await #expect(throws: LapseError.self) { _ = try await c.get(URL(string: url)!) }
            #expect(error?.code == .network && error?.reason.hasPrefix(text) == true, "\(String(describing: error))")
            #expect(c.statistics.attempts == 1 && c.statistics.retries == 0)
            #expect(recorder.delays.isEmpty)
            #expect(error?.description.contains("abcdef") == false)
        }
    }

    /// A server that answered before and then refuses (restarting mid-job) is retried, not given up at once; and
    /// every request names lapse and its version.
    @Test func aServerThatAnsweredBeforeIsRetriedWhenItRefuses() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let recorder = DelayRecorder()
        let c = client(attempts: 3, recorder: recorder)
        let echoed = try await c.get(URL(string: server.baseURL + "/echo-headers")!)
        let headers = try JSONSerialization.jsonObject(with: echoed.body) as? [String: String] ?? [:]
        #expect(headers.first { $0.key.lowercased() == "user-agent" }?.value == "lapse/\(lapseVersion)")
        let url = URL(string: server.baseURL + "/bytes/10")!
        server.stop()
        let error = await #expect(throws: LapseError.self) { _ = try await c.get(url) }
        #expect(
            error?.reason.hasPrefix("connection refused") == true
                && error?.reason.hasSuffix("(after 3 attempts)") == true,
            "\(String(describing: error))")
        #expect(recorder.delays.count == 2)
    }

    /// Google's error bodies: rate refusals are retried, a used-up daily quota and a refused key are not.
    @Test func googleErrorBodiesAreClassified() throws {
        func response(_ status: Int, _ json: String) -> HTTPResponse {
            HTTPResponse(status: status, body: Data(json.utf8))
        }
        let rate = response(
            403,
            #"{"error": {"code": 403, "message": "Rate Limit Exceeded", "errors": [{"reason": "rateLimitExceeded"}]}}"#)
        let daily = response(
            403,
            #"{"error": {"code": 403, "message": "Daily Limit Exceeded", "errors": "#
                + #"[{"reason": "dailyLimitExceeded"}]}}"#
        )
        let perDay = response(
            429,
            #"{"error": {"code": 429, "message": "Quota exceeded for quota metric 'Tile requests' and limit "#
                + #"'Tile requests per day'", "status": "RESOURCE_EXHAUSTED"}}"#
        )
        let key = response(
            400,
            #"{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "#
                + #""status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "#
                + #""reason": "API_KEY_INVALID"}]}}"#
        )
        let disabled = response(
            403,
            #"{"error": {"code": 403, "message": "Routes API has not been used in project 1 before or it is "#
                + #"disabled.", "status": "PERMISSION_DENIED", "details": [{"reason": "SERVICE_DISABLED"}]}}"#
        )
        #expect(GoogleAPIError.temporaryRefusal(rate) == "HTTP 403 (rateLimitExceeded): Rate Limit Exceeded")
        #expect(GoogleAPIError.temporaryRefusal(daily) == nil && GoogleAPIError(daily)?.isDailyLimit == true)
        #expect(GoogleAPIError(daily)?.isQuotaOrRate == true && GoogleAPIError(daily)?.isKeyOrPermission == false)
        #expect(GoogleAPIError(perDay)?.isDailyLimit == true && GoogleAPIError(perDay)?.isQuotaOrRate == true)
        #expect(GoogleAPIError(key)?.isKeyOrPermission == true && GoogleAPIError(key)?.reasons == ["API_KEY_INVALID"])
        #expect(GoogleAPIError(disabled)?.isKeyOrPermission == true && GoogleAPIError.temporaryRefusal(disabled) == nil)
        #expect(GoogleAPIError(HTTPResponse(status: 200, body: Data("{}".utf8))) == nil)
    }

    @Test func cancellationStopsARequest() async throws {
        let server = try LocalServer(script: "net_standin.py")
        let c = client(timeout: 60)
        let task = Task { try await c.get(URL(string: server.baseURL + "/stall?seconds=30")!) }
        try await Task.sleep(nanoseconds: 200_000_000)
        task.cancel()
        await #expect(throws: LapseError.self) { _ = try await task.value }
    }
}
