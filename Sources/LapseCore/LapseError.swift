// SPDX-License-Identifier: GPL-3.0-or-later

/// The one error type that Lapse's modules throw to their callers.
///
/// It names what failed (a file path, a URL with its query string redacted, a frame index…) and why,
/// and prints as one readable line: `subject: reason`.
public struct LapseError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is; lets callers react without parsing the message.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The caller asked for something that cannot be done (bad option value, contradictory options).
        /// The CLI exits with 64 (`EX_USAGE`) for these.
        public static let usage = Code("usage")
        /// An input could not be read: missing, unreadable, not the expected format, corrupt.
        public static let invalidInput = Code("invalidInput")
        /// An output could not be written (directory missing, no permission, exists without `overwrite`).
        public static let output = Code("output")
        /// A network request failed (HTTP error, timeout, refused connection).
        public static let network = Code("network")
        /// A remote service refused the request because of quota or rate limits.
        public static let rateLimited = Code("rateLimited")
        /// A remote service refused the credentials (e.g. REQUEST_DENIED).
        public static let denied = Code("denied")
        /// The data asked for does not exist (no route, no panorama coverage, a range beyond the media's end).
        public static let notFound = Code("notFound")
        /// A codec, muxer or C library reported a failure.
        public static let codec = Code("codec")
        /// The work was cancelled.
        public static let cancelled = Code("cancelled")
        /// Anything else.
        public static let other = Code("other")
    }

    public var code: Code
    /// What failed: a path, a redacted URL, a service name. `nil` when the reason says it all.
    public var subject: String?
    /// Why, in a few words, lower case, no trailing period.
    public var reason: String

    public init(_ code: Code, _ subject: String?, _ reason: String) {
        self.code = code
        self.subject = subject
        self.reason = reason
    }

    public var description: String {
        guard let subject, !subject.isEmpty else { return reason }
        return "\(subject): \(reason)"
    }

    /// A usage error (exit code 64 in the CLI).
    public static func usage(_ reason: String) -> LapseError { LapseError(.usage, nil, reason) }
}
