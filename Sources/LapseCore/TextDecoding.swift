// SPDX-License-Identifier: GPL-3.0-or-later

// Settings a job file gives as text (a preset's name, a source such as `local:DIR`, a corner) are read with one
// shape of error, the one their command-line flags give: what the setting takes, and the text that was not it.

extension SingleValueDecodingContainer {
    /// A string, parsed by `parse`.
    /// - Parameters:
    ///   - expected: what the setting takes, as the error says it (`one of ultrafast, …`, `google, local:DIR, …`).
    ///   - parse: the setting from its text; nil for text it does not take.
    /// - Returns: the parsed value.
    /// - Throws: `DecodingError.typeMismatch` when the value is not a string (`valueNotFound` when it is null);
    ///   `DecodingError.dataCorrupted` "takes EXPECTED, not 'TEXT'" when `parse` refuses it.
    public func decodeText<T>(takes expected: String, _ parse: (String) -> T?) throws -> T {
        let text = try decode(String.self)
        guard let value = parse(text) else {
            throw DecodingError.dataCorruptedError(in: self, debugDescription: "takes \(expected), not '\(text)'")
        }
        return value
    }
}
