// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A command's `--json` output (its summary, or its error object), parsed.
public enum JSONSummary {
    public struct KeyStyleError: Error, CustomStringConvertible {
        public var key: String
        public var description: String { "--json key \"\(key)\" is not snake_case" }
    }

    /// The object on stdout, or nil when it is not a JSON object. Throws ``KeyStyleError`` when a key anywhere
    /// in it (nested objects and arrays included) is not snake_case (`[a-z0-9_]`, starting with a letter):
    /// every command's summary is in the one style, as ffprobe's.
    public static func parse(_ data: Data) throws -> [String: Any]? {
        let object = try JSONSerialization.jsonObject(with: data)
        try check(object)
        return object as? [String: Any]
    }

    static func check(_ value: Any) throws {
        if let object = value as? [String: Any] {
            for (key, inner) in object {
                guard let first = key.unicodeScalars.first, ("a"..."z").contains(first),
                    key.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" })
                else { throw KeyStyleError(key: key) }
                try check(inner)
            }
        } else if let array = value as? [Any] {
            for inner in array { try check(inner) }
        }
    }
}
