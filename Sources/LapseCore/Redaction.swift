// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Hides secrets (API keys, signed query strings) before a URL or message is shown to anyone.
public enum Redaction {
    /// The URL as it may be printed: scheme, host, port and path, with the query string replaced by `?…`
    /// and any user:password removed. A string that is not a URL is returned unchanged.
    public static func url(_ string: String) -> String {
        guard string.contains("://"), var components = URLComponents(string: string) else { return string }
        let hadQuery = components.percentEncodedQuery != nil
        components.percentEncodedQuery = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        let base = components.string ?? string
        return hadQuery ? base + "?…" : base
    }

    /// `message` with every occurrence of each secret replaced by `[redacted]`.
    public static func message(_ message: String, hiding secrets: [String]) -> String {
        var result = message
        for secret in secrets where secret.count >= 4 {
            result = result.replacingOccurrences(of: secret, with: "[redacted]")
        }
        return result
    }
}
