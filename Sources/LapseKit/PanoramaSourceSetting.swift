// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Where a job's panoramas come from, as `--source` and a job file's `source` name it: `google`, `panoramax`,
/// `mapillary`, `local:DIR` (your 360° photos) or `video:FILE` (a 360° video). Parsed once, where it enters
/// (``init(parsing:)``); coded in JSON as that same text.
public enum PanoramaSourceSetting: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Google Street View (Map Tiles API).
    case google
    /// Panoramax (a GeoVisio STAC API).
    case panoramax
    /// Mapillary (Graph API v4).
    case mapillary
    /// A folder of your 360° photos.
    case local(directory: URL)
    /// A 360° video file (or URL).
    case video(file: URL)

    /// What `--source` takes, for messages.
    public static let forms = "google, panoramax, mapillary, local:DIR or video:FILE"

    /// - Throws: ``LapseError`` `.usage` for anything else, naming what it takes.
    public init(parsing text: String) throws {
        guard let parsed = Self(text) else {
            throw LapseError.usage("`source` takes \(Self.forms), not '\(text)'")
        }
        self = parsed
    }

    private init?(_ text: String) {
        switch text {
        case "google": self = .google
        case "panoramax": self = .panoramax
        case "mapillary": self = .mapillary
        case _ where text.hasPrefix("local:") && text.count > "local:".count:
            self = .local(directory: URL(fileURLWithPath: String(text.dropFirst("local:".count)), isDirectory: true))
        case _ where text.hasPrefix("video:") && text.count > "video:".count:
            self = .video(file: URL(location: String(text.dropFirst("video:".count))))
        default: return nil
        }
    }

    /// The setting as `--source` takes it.
    public var description: String {
        switch self {
        case .google: "google"
        case .panoramax: "panoramax"
        case .mapillary: "mapillary"
        case .local(let directory): "local:" + directory.shown
        case .video(let file): "video:" + file.shown
        }
    }

    /// The video, for `video:` (``Foundation/URL/init(location:)`` of the text: a file, `~` expanded, or a URL).
    public var videoFile: URL? {
        if case .video(let file) = self { return file }
        return nil
    }

    /// The file or folder your own pictures are read from (`local:`, `video:`).
    public var ownPictures: URL? {
        switch self {
        case .local(let directory): directory
        case .video(let file): file
        default: nil
        }
    }

    /// The name of an online source whose imagery must carry its credit (nil for your own photos and videos).
    public var creditedName: String? {
        switch self {
        case .google: Attribution.googleStreetView
        case .panoramax: Attribution.panoramax
        case .mapillary: Attribution.mapillary
        case .local, .video: nil
        }
    }

    /// Decodes the text form; anything else is `DecodingError.dataCorrupted` saying what it takes.
    public init(from decoder: any Decoder) throws {
        self = try decoder.singleValueContainer().decodeText(takes: Self.forms) { Self($0) }
    }

    /// Writes the text ``init(parsing:)`` reads (`google`, `local:DIR`, `video:FILE`, …).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
