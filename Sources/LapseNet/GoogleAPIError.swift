// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The error body of Google's JSON APIs (Map Tiles, Routes): `{"error": {"code", "message", "status", "errors":
/// [{"reason"}], "details": [{"@type", "reason"}]}}`.
///
/// Source: Google Cloud API design guide, "Errors" (`google.rpc.Status`, `ErrorInfo.reason`), and the older
/// `errors[].reason` values (`rateLimitExceeded`, `userRateLimitExceeded`, `quotaExceeded`, `dailyLimitExceeded`)
/// that Google Maps Platform still sends with HTTP 403.
public struct GoogleAPIError: Sendable, Equatable {
    /// The HTTP status the error came with.
    public var httpStatus: Int
    /// `error.code` (usually the HTTP status).
    public var code: Int?
    /// `error.message`, as Google wrote it.
    public var message: String?
    /// `error.status`, a `google.rpc.Code` name such as `PERMISSION_DENIED` or `RESOURCE_EXHAUSTED`.
    public var status: String?
    /// Every `errors[].reason` and `details[].reason` (e.g. `rateLimitExceeded`, `API_KEY_INVALID`,
    /// `SERVICE_DISABLED`).
    public var reasons: [String]

    /// The error of a non-2xx response whose body is Google's error JSON; `nil` for a 2xx response or another body.
    public init?(_ response: HTTPResponse) {
        guard !response.isSuccess,
            let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let error = object["error"] as? [String: Any]
        else { return nil }
        httpStatus = response.status
        code = (error["code"] as? NSNumber)?.intValue
        message = error["message"] as? String
        status = error["status"] as? String
        var reasons: [String] = []
        for list in [error["errors"], error["details"]] {
            for item in list as? [[String: Any]] ?? [] {
                if let reason = item["reason"] as? String, !reasons.contains(reason) { reasons.append(reason) }
            }
        }
        self.reasons = reasons
    }

    /// Reasons that mean "too many requests for now" or "quota used up": worth retrying with backoff.
    public static let temporaryReasons: Set<String> = [
        "rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded", "RATE_LIMIT_EXCEEDED"
    ]

    /// Whether the project's daily quota is used up (`dailyLimitExceeded`, a per-day quota named in the message):
    /// no backoff will help before it resets, so it is not retried.
    public var isDailyLimit: Bool {
        reasons.contains("dailyLimitExceeded") || (message ?? "").lowercased().contains("per day")
    }

    /// Whether this is a quota or rate refusal (`RESOURCE_EXHAUSTED`, HTTP 429, or a rate/quota reason).
    public var isQuotaOrRate: Bool {
        httpStatus == 429 || status == "RESOURCE_EXHAUSTED" || reasons.contains { Self.temporaryReasons.contains($0) }
            || reasons.contains("dailyLimitExceeded")
    }

    /// Whether the key or the project refused the request: a bad, missing or restricted key, an API not enabled.
    public var isKeyOrPermission: Bool {
        guard !isQuotaOrRate else { return false }
        if status == "PERMISSION_DENIED" || status == "UNAUTHENTICATED" || httpStatus == 401 || httpStatus == 403 {
            return true
        }
        return reasons.contains {
            [
                "API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "SERVICE_DISABLED", "API_KEY_HTTP_REFERRER_BLOCKED",
                "API_KEY_IP_ADDRESS_BLOCKED", "keyInvalid"
            ].contains($0)
        }
            || (message?.lowercased().contains("api key") ?? false)
    }

    /// `HTTP 403 PERMISSION_DENIED (SERVICE_DISABLED): message`, the parts that are present.
    public var summary: String {
        var s = "HTTP \(httpStatus)"
        if let status { s += " " + status }
        if !reasons.isEmpty { s += " (" + reasons.joined(separator: ", ") + ")" }
        if let message, !message.isEmpty { s += ": " + message.trimmingCharacters(in: .whitespacesAndNewlines) }
        return s
    }

    /// For ``HTTPClient``'s `temporaryRefusal`: the problem when `response` is Google refusing for quota or rate
    /// (retried with backoff), else `nil`.
    @Sendable public static func temporaryRefusal(_ response: HTTPResponse) -> String? {
        guard let error = GoogleAPIError(response), error.isQuotaOrRate, !error.isDailyLimit, response.status != 429
        else { return nil }
        return error.summary
    }
}
