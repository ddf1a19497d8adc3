// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LapseCore

/// A plain URLSession GET with a deadline, until LapseNet's shared client takes over.
/// One long-lived session for the whole process (creating many sessions crashes on Linux).
public struct FoundationHTTPClient: HTTPGetting {
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.httpAdditionalHeaders = ["User-Agent": "lapse"]
        return URLSession(configuration: configuration)
    }()

    public init() {}

    public func get(_ url: URL) async throws -> (data: Data, status: Int) {
        do {
            let (data, response) = try await Self.session.data(from: url)
            return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
        } catch {
            let reason = (error as NSError).localizedDescription
            throw LapseError(.network, Redaction.url(url.absoluteString), "no response: \(Redaction.message(reason, hiding: [url.absoluteString, url.query ?? ""]))")
        }
    }
}
