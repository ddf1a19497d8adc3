// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension URL {
    /// A location as users type it: text with a scheme (`https://…`, `file://…`) is that URL, anything else a
    /// file path — `~` expanded, a relative path resolved against the current directory but kept as given
    /// (``shown``).
    public init(location: String) {
        if location.contains("://"), let url = URL(string: location), url.scheme != nil {
            self = url
        } else {
            self = URL(fileURLWithPath: location)
        }
    }

    /// The location as its user named it, for messages and records: a file's path as given (``filePath``: a
    /// relative path stays relative), any other URL whole.
    public var shown: String { isFileURL ? filePath : absoluteString }

    /// A file's path for the file system, spelled as given where that names the same file: relative to the current
    /// directory it stays relative (`URL(fileURLWithPath: "out.mp4")` → `out.mp4`, as messages built from it should
    /// read); relative to any other folder (`URL(fileURLWithPath:relativeTo:)`), or with no folder, it is absolute.
    public var filePath: String {
        guard let base = baseURL, base.isFileURL,
            base.standardizedFileURL.path
                == URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
                .standardizedFileURL.path
        else { return path }
        return relativePath
    }

    /// The location as it may be printed anywhere: a file as given (``filePath``), any other URL with its query and
    /// credentials hidden (``Redaction/url(_:)``).
    public var printable: String { isFileURL ? filePath : Redaction.url(absoluteString) }

    /// What to hand a C library or a system call that opens it: a file's absolute path, any other URL whole.
    public var openable: String { isFileURL ? path : absoluteString }

    /// The file name's extension in lower case (`mp4` of `A.MP4`), empty when there is none.
    public var lowercasedExtension: String { pathExtension.lowercased() }

    /// The file beside this one with its extension replaced by `suffix` (`out.mp4` → `out.credits.txt` for
    /// `.credits.txt`; a name without an extension gets `suffix` added), spelled as this one is (``shown``).
    public func replacingExtension(with suffix: String) -> URL {
        URL(fileURLWithPath: (filePath as NSString).deletingPathExtension + suffix)
    }
}

extension LapseError {
    /// An error of `code` about the file or URL `location` because of `reason`: a file named as given, any other
    /// URL with its query and credentials hidden (``Redaction/url(_:)``).
    public init(_ code: Code, _ location: URL, _ reason: String, cause: Cause? = nil) {
        self.init(code, location.printable, reason, cause: cause)
    }

    /// The failure of a system call on `location` that set `errno` (read here, so call it right after the call):
    /// the reason is `doing` followed by the system's message, the cause ``Cause/posix(_:)``.
    public static func posix(_ code: Code, _ location: URL, _ doing: String, errno value: Int32 = errno) -> LapseError {
        LapseError(code, location, "\(doing): \(String(cString: strerror(value)))", cause: .posix(value))
    }
}

/// A setting's file or URL, kept in JSON as the text users type: read with ``Foundation/URL/init(location:)``,
/// written back as it was read (``quoted``: once set otherwise, as ``Foundation/URL/shown``); a key that is absent
/// or `null` reads as nil, and nil is not written.
@propertyWrapper
public struct LocationText: Sendable, Hashable, Codable {
    /// The location, nil when not set.
    public var wrappedValue: URL? { didSet { text = nil } }
    /// The text it was read from (a job file's, `~` and all), until it is set otherwise: what messages quote.
    public private(set) var text: String?

    /// A location, nil for none.
    public init(wrappedValue: URL?) { self.wrappedValue = wrappedValue }

    /// Reads the text (or `null`).
    /// - Throws: `DecodingError.typeMismatch` for anything but a string or `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        text = container.decodeNil() ? nil : try container.decode(String.self)
        wrappedValue = text.map(URL.init(location:))
    }

    /// The location as a message should quote it: the text it was read from, else ``Foundation/URL/shown``.
    public var quoted: String? { text ?? wrappedValue?.shown }

    /// Locations are equal when they are the same, however they were spelled.
    public static func == (a: LocationText, b: LocationText) -> Bool { a.wrappedValue == b.wrappedValue }

    /// Hashes the location alone (as ``==`` compares).
    public func hash(into hasher: inout Hasher) { hasher.combine(wrappedValue) }

    /// Writes the text, or `null` when nil (a keyed container leaves the key out instead).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let quoted { try container.encode(quoted) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    /// A ``LocationText`` whose key may be absent (nil then), as an optional property's would.
    public func decode(_ type: LocationText.Type, forKey key: Key) throws -> LocationText {
        try decodeIfPresent(type, forKey: key) ?? LocationText(wrappedValue: nil)
    }
}

extension KeyedEncodingContainer {
    /// A ``LocationText``'s text, its key left out when it is nil, as an optional property's would be.
    public mutating func encode(_ value: LocationText, forKey key: Key) throws {
        if let text = value.quoted { try encode(text, forKey: key) }
    }
}
