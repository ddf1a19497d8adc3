// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// One still image to show, with its own display time when one was given.
public struct ImageInput: Sendable, Equatable {
    /// The image file.
    public var url: URL
    /// Seconds to show it, from a `path<TAB>seconds` line of a list file; `nil` means "the job's default".
    public var duration: Double?
    /// The durations an image may be shown for, seconds (`--image-duration` and list files alike).
    public static let durationRange: ClosedRange<Double> = 0.001...86_400

    /// The image at `url`, shown for `duration` seconds (nil: the job's default).
    public init(url: URL, duration: Double? = nil) {
        self.url = url
        self.duration = duration
    }
}

/// Expands what users give as image inputs — files, directories, `@list.txt` files — into a list of images.
public enum ImageInputs {
    /// File name extensions taken from a directory (lower case). Explicitly named files may have any extension.
    public static let imageExtensions: Set<String> = [
        "jpg", "jpeg", "png", "webp", "bmp", "tif", "tiff", "jxl", "avif", "ppm", "pgm", "tga"
    ]

    /// Expands `arguments` (as users type them: paths, `@list.txt`) in order:
    /// - a directory → its image files (by extension, hidden files skipped), in natural order (`img2` before `img10`);
    /// - `@list.txt` → one path a line (relative paths are relative to the list's folder), optionally
    ///   `path<TAB>seconds`; blank lines and lines starting with `#` are skipped;
    /// - anything else → that file.
    /// - Throws: ``LapseError`` `.invalidInput` for a missing directory or list file, a list line with a bad
    ///   duration (decimal seconds) or a NUL byte, or a directory with no images.
    public static func expand(_ arguments: [String]) throws -> [ImageInput] {
        var result: [ImageInput] = []
        for argument in arguments {
            if argument.hasPrefix("@") {
                result += try readList(URL(fileURLWithPath: String(argument.dropFirst())))
                continue
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory), isDirectory.boolValue {
                result += try listDirectory(URL(fileURLWithPath: argument, isDirectory: true))
            } else {
                result.append(ImageInput(url: URL(fileURLWithPath: argument)))
            }
        }
        return result
    }

    static func listDirectory(_ directory: URL) throws -> [ImageInput] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw LapseError(.invalidInput, directory, "cannot read the directory")
        }
        let images =
            names
            .filter { !$0.hasPrefix(".") && imageExtensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .sorted(by: naturalLess)
        guard !images.isEmpty else { throw LapseError(.invalidInput, directory, "no image files in this directory") }
        return images.map { ImageInput(url: directory.appendingPathComponent($0, isDirectory: false)) }
    }

    static func readList(_ list: URL) throws -> [ImageInput] {
        let listPath = list.shown
        guard let data = FileManager.default.contents(atPath: list.path) else {
            throw LapseError(
                .invalidInput, list,
                FileManager.default.fileExists(atPath: list.path) ? "cannot read the list file" : "no such file")
        }
        let base = list.deletingLastPathComponent()
        var result: [ImageInput] = []
        for (number, rawLine) in String(decoding: data, as: UTF8.self).split(
            omittingEmptySubsequences: false, whereSeparator: \.isNewline
        ).enumerated() {
            let line = rawLine.trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
            if line.trimmingCharacters(in: .whitespaces).isEmpty || line.hasPrefix("#") { continue }
            // A file name cannot hold a NUL byte; the system would read only what comes before it.
            guard !line.contains("\0") else {
                throw LapseError(.invalidInput, "\(listPath):\(number + 1)", "the line has a NUL byte")
            }
            let fields = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            let path = String(fields[0])
            // Relative to the list's folder (as given: a list named without one leaves them as they are).
            let url =
                path.hasPrefix("/") || !listPath.contains("/")
                ? URL(fileURLWithPath: path) : base.appendingPathComponent(path, isDirectory: false)
            var duration: Double?
            if fields.count == 2 {
                let text = fields[1].trimmingCharacters(in: .whitespaces)
                guard let d = NumberText.decimal(text), d > 0 else {
                    throw LapseError(
                        .invalidInput, "\(listPath):\(number + 1)", "'\(text)' is not a duration in seconds")
                }
                // As --image-duration: a day at most (a longer still is a mistake, and would encode for ever).
                guard ImageInput.durationRange.contains(d) else {
                    throw LapseError(
                        .invalidInput, "\(listPath):\(number + 1)", "duration \(text) s is outside 0.001…86400 s")
                }
                duration = d
            }
            result.append(ImageInput(url: url, duration: duration))
        }
        guard !result.isEmpty else { throw LapseError(.invalidInput, list, "the list names no images") }
        return result
    }

    /// Natural order: runs of digits compare by value (`img2` < `img10`), other text case-insensitively,
    /// ties broken by the plain string order.
    public static func naturalLess(_ a: String, _ b: String) -> Bool {
        let x = Array(a.unicodeScalars)
        let y = Array(b.unicodeScalars)
        var i = 0
        var j = 0
        while i < x.count && j < y.count {
            let dx = x[i].properties.numericType != nil && ("0"..."9").contains(x[i])
            let dy = y[j].properties.numericType != nil && ("0"..."9").contains(y[j])
            if dx && dy {
                var ei = i
                var ej = j
                while ei < x.count && ("0"..."9").contains(x[ei]) { ei += 1 }
                while ej < y.count && ("0"..."9").contains(y[ej]) { ej += 1 }
                let nx = String(String.UnicodeScalarView(x[i..<ei])).drop { $0 == "0" }
                let ny = String(String.UnicodeScalarView(y[j..<ej])).drop { $0 == "0" }
                if nx.count != ny.count { return nx.count < ny.count }
                if nx != ny { return nx < ny }
                i = ei
                j = ej
            } else {
                let cx = String(x[i]).lowercased()
                let cy = String(y[j]).lowercased()
                if cx != cy { return cx < cy }
                i += 1
                j += 1
            }
        }
        if (x.count - i) != (y.count - j) { return (x.count - i) < (y.count - j) }
        return a < b
    }
}
