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
        self.init(
            code, location.isFileURL ? location.filePath : Redaction.url(location.absoluteString), reason,
            cause: cause)
    }

    /// The failure of a system call on `location` that set `errno` (read here, so call it right after the call):
    /// the reason is `doing` followed by the system's message, the cause ``Cause/posix(_:)``.
    public static func posix(_ code: Code, _ location: URL, _ doing: String, errno value: Int32 = errno) -> LapseError {
        LapseError(code, location, "\(doing): \(String(cString: strerror(value)))", cause: .posix(value))
    }
}
