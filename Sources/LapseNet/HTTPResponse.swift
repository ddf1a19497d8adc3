// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// A complete HTTP response: status code, headers and the whole body.
public struct HTTPResponse: Sendable {
    /// The HTTP status code, e.g. 200.
    public var status: Int
    /// Response headers with lower-cased names.
    public var headers: [String: String]
    /// The body as received (already decoded from any transfer or content encoding).
    public var body: Data

    /// An answer of HTTP `status` with its headers (names lower-cased) and body.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.body = body
    }

    /// The header `name` (case-insensitive), or `nil`.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// True for 2xx statuses.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The body as UTF-8 text (invalid bytes replaced).
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// Returns the response when its status is 2xx, else throws.
    /// - Parameters:
    ///   - subject: what to name in the error: a service name or a URL already passed through `Redaction.url`.
    ///   - secrets: strings (API keys) to hide from the message, which quotes the start of the body.
    /// - Throws: ``LapseError`` `.denied` for 401/403, `.notFound` for 404, `.rateLimited` for 429,
    ///   `.network` for any other non-2xx status.
    /// - Returns: this response.
    @discardableResult
    public func requireSuccess(_ subject: String, hiding secrets: [String] = []) throws -> HTTPResponse {
        guard !isSuccess else { return self }
        let code: LapseError.Code
        switch status {
        case 401, 403: code = .denied
        case 404: code = .notFound
        case 429: code = .rateLimited
        default: code = .network
        }
        var reason = "HTTP \(status)"
        let snippet = text.replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)
        if !snippet.isEmpty { reason += ": " + String(snippet.prefix(200)) }
        throw LapseError(code, subject, Redaction.message(reason, hiding: secrets), cause: .http(status))
    }
}

/// One HTTP request as the client sends it.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The URL asked, with its query.
    public var url: URL
    /// Headers sent, besides the client's own (`User-Agent`).
    public var headers: [String: String]
    /// The body sent (`POST`), or nil.
    public var body: Data?
    /// The largest answer accepted, in bytes (nil: the client's ``HTTPClient/Configuration/maxBodyBytes``): what
    /// the request's service documents, with room to spare.
    public var maxBodyBytes: Int?

    /// A request of `method` for `url` with these headers and body, its answer limited to `maxBodyBytes` (nil:
    /// the client's limit).
    public init(
        method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil, maxBodyBytes: Int? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.maxBodyBytes = maxBodyBytes
    }
}
