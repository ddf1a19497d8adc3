// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The one error type that Lapse's modules throw to their callers.
///
/// It names what failed (a file path, a URL with its query string redacted, a frame index…) and why,
/// and prints as one readable line: `subject: reason`. A setting the reason names is written as the library's
/// API names it, in backticks (`` `overwrite` ``, `` `lookAt` ``): a front end shows its own name for it (`lapse`
/// shows the flag, `--overwrite`, `--look-at`).
public struct LapseError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is; lets callers react without parsing the message.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The code's name, as `--json` prints it (`usage`, `network`, …).
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

    /// The lower-level error behind a failure, for callers that react to it (the message already says it in
    /// words).
    public enum Cause: Sendable, Equatable, CustomStringConvertible {
        /// An FFmpeg function's negative return value (`AVERROR(EAGAIN)`, `AVERROR_INVALIDDATA`…).
        case ffmpeg(Int32)
        /// A system call's `errno` (`ENOSPC`, `EACCES`…).
        case posix(Int32)
        /// The HTTP status of the answer that failed or was refused (a refusal for quota can come as 200).
        case http(Int)

        /// The cause as a short tag (`AVERROR -11`, `errno 28`, `HTTP 429`).
        public var description: String {
            switch self {
            case .ffmpeg(let c): return "AVERROR \(c)"
            case .posix(let e): return "errno \(e)"
            case .http(let s): return "HTTP \(s)"
            }
        }
    }

    /// What kind of failure it is (and so the exit status and the JSON `code`).
    public var code: Code
    /// What failed: a path, a redacted URL, a service name. `nil` when the reason says it all.
    public var subject: String?
    /// Why, in a few words, lower case, no trailing period.
    public var reason: String
    /// The FFmpeg, system or HTTP error behind it, when there is one.
    public var cause: Cause?

    /// An error of `code` about `subject` (a file, URL or setting; nil for none) because of `reason` (one clause, no
    /// final full stop), with the underlying `cause` where there is one.
    public init(_ code: Code, _ subject: String?, _ reason: String, cause: Cause? = nil) {
        self.code = code
        self.subject = subject
        self.reason = reason
        self.cause = cause
    }

    /// The failure of a system call that set `errno` (read here, so call it right after the call): the reason
    /// is `doing` followed by the system's message, the cause ``Cause/posix(_:)``.
    public static func posix(_ code: Code, _ subject: String?, _ doing: String, errno value: Int32 = errno)
        -> LapseError
    {
        LapseError(code, subject, "\(doing): \(String(cString: strerror(value)))", cause: .posix(value))
    }

    /// The error's one line: `subject: reason`, or the reason alone without a subject.
    public var description: String {
        guard let subject, !subject.isEmpty else { return reason }
        return "\(subject): \(reason)"
    }

    /// A usage error (exit code 64 in the CLI).
    public static func usage(_ reason: String) -> LapseError { LapseError(.usage, nil, reason) }
}
