// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Every setting of a hyperlapse, as flags of `lapse hyperlapse` and as keys of a job file (`--config JOB.json`).
///
/// The job file is JSON with these keys (all optional; flags given on the command line override the file):
/// `from`, `to`, `via`, `provider`, `route`, `source`, `track`, `spacing`, `size`, `fov`, `fps`, `lookAt`,
/// `headingOffset`, `keyframes`, `zoom`, `crossfade`, `output`, `gif`, `cacheDir`, `radius`, `crf`, `preset`,
/// `panoHeading`, `frameStep`, `gifWidth`, `keyFile`, `osrmURL`, `timeout`, `stabilize`, `forward`, `toneMatch`,
/// `creditPosition`, `copyright`, `includeIndoor`, `sharedCache`, `equirectangular` (and `frames` and `report`,
/// which a run writes and a read ignores). After a run the effective settings are written next to the output as
/// `OUT.job.json` (paths made absolute), so the same hyperlapse can be rendered again with `--config OUT.job.json`
/// from any folder.
public struct HyperlapseSettings: Codable, Sendable, Equatable {
    /// Start and end of a planned route, `"lat,lng"`.
    public var from: String?
    /// Where a planned route ends, `LAT,LNG` (degrees).
    public var to: String?
    /// Stops between, in order.
    public var via: [String]?
    /// Directions service for `from`/`to`: `google` (the Routes API, default), `google-directions` (the legacy
    /// Directions API) or `osrm`.
    public var provider: DirectionsService?
    /// A route file instead of `from`/`to`: GPX, GeoJSON, KML, `lat,lng` lines, an encoded polyline or a saved
    /// Google Directions/Routes API answer.
    @LocationText public var route: URL?
    /// Where the panoramas come from: Google, Panoramax, Mapillary, your 360° photos or a 360° video.
    public var source: PanoramaSourceSetting?
    /// GPX track giving the positions of a `video:` source by time.
    @LocationText public var track: URL?
    /// Metres between route points (default 10).
    public var spacing: Double?
    /// Frame size (default 1280x720; `"1280x720"` in a job file).
    public var size: FrameSize?
    /// Horizontal field of view in degrees (default 90).
    public var fov: Double?
    /// Frames per second of the output, 1–120 (default 12); in the file a number (`12`, `29.97`) or a fraction's text
    /// (`"30000/1001"`), as ``FrameRate`` reads and writes it.
    public var fps: FrameRate?
    /// Aim the camera at this `"lat,lng"` in every frame.
    public var lookAt: String?
    /// Degrees added to the road's heading (90 looks right, 180 back).
    public var headingOffset: Double?
    /// A camera file (JSON, see ``CameraScript``) with keyframes and shots.
    @LocationText public var keyframes: URL?
    /// Street View zoom: `auto` (default, from the frame size and fov) or 0–5.
    public var zoom: Zoom?
    /// Blend consecutive panoramas.
    public var crossfade: Bool?
    /// The MP4 to write.
    @LocationText public var output: URL?
    /// A GIF to write as well.
    @LocationText public var gif: URL?
    /// Width of the GIF in pixels (default: a third of the video's width).
    public var gifWidth: Int?
    /// Cache folder (default `$XDG_CACHE_HOME/lapse`).
    @LocationText public var cacheDir: URL?
    /// The cache folder is shared with other users (e.g. a team's cluster volume): answers marked
    /// `Cache-Control: private` are not written to it (default false).
    public var sharedCache: Bool?
    /// Search radius for the nearest panorama, metres (default 50).
    public var radius: Double?
    /// H.264 CRF (default 20) and preset (default medium).
    public var crf: Double?
    /// x264's preset, `ultrafast` … `veryslow` (default `medium`).
    public var preset: EncoderPreset?
    /// For `video:` and panoramas without a known heading: the compass heading the centre column faces.
    public var panoHeading: Double?
    /// For `video:` without a track: use every N-th frame (default 1).
    public var frameStep: Int?
    /// A file holding the Google Maps API key (else `GOOGLE_MAPS_API_KEY`).
    @LocationText public var keyFile: URL?
    /// An OSRM server for `provider: osrm` (else `LAPSE_OSRM_URL`, else the public demo server).
    public var osrmURL: String?
    /// Seconds after which an HTTP request (route, metadata, tile) gives up, its retries included, 0.1–3600 (default:
    /// 30 s an attempt, 5 attempts).
    public var timeout: Double?
    /// Steady the panoramas from their pictures (default true).
    public var stabilize: Bool?
    /// The direction of travel in the pictures, degrees right of their centre column (default: measured).
    public var forward: Double?
    /// Match consecutive frames' tone (default true).
    public var toneMatch: Bool?
    /// The corner of the frames' credit: `bottom-right` (default), `bottom-left`, `top-left`, `top-right`, or
    /// `none` (no credit: only for your own photos and videos, refused for `google` and `panoramax`).
    public var creditPosition: CreditPosition?
    /// The copyright line of your own imagery, e.g. "© 2026 Ada Lovelace": the MP4's `copyright` tag and the credits
    /// file (default: none for your own photos and videos; other sources' credits are theirs and always given).
    public var copyright: String?
    /// Google: take indoor panoramas (metadata `imageryType: indoor`, a shop's or a museum's photosphere) as any
    /// other (default false: left out, their points counted as without coverage).
    public var includeIndoor: Bool?
    /// A video source is equirectangular though nothing says so (no spherical metadata, edges that do not meet as a
    /// 360° picture's do): see ``VideoPanoramaSource/projection(of:path:equirectangular:)``. Default false.
    public var equirectangular: Bool?
    /// Written by a run, ignored when read: every frame's orientation and where it came from.
    public var frames: [FrameOrientation]?
    /// Written by a run, ignored when read: the report page it wrote (the command line's `--report`), so that a
    /// later run over the same output can tell of it (``HyperlapseJob/earlierOutputs(of:except:)``).
    @LocationText public var report: URL?

    /// Settings with nothing set: every value comes from ``defaults`` or a job file.
    public init() {}

    /// Street View zoom: from the frame size and fov, or a level 0–5 (`"auto"`, `"3"` or `3` in a job file).
    public enum Zoom: Sendable, Hashable, Codable, CustomStringConvertible {
        case auto
        case level(Int)

        /// `auto` or `0`…`5`.
        public init?(parsing text: String) {
            if text == "auto" {
                self = .auto
            } else if let z = Int(text), (0...5).contains(z) {
                self = .level(z)
            } else {
                return nil
            }
        }

        /// `auto`, or the zoom level's number.
        public var description: String {
            switch self {
            case .auto: "auto"
            case .level(let z): String(z)
            }
        }

        /// Any whole number is read (``HyperlapseSettings/makeJob(overwrite:)`` says when it is not 0–5).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let z = try? container.decode(Int.self) {
                self = .level(z)
            } else if let text = try? container.decode(String.self), text == "auto" || Int(text) != nil {
                self = Int(text).map { .level($0) } ?? .auto
            } else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not auto or 0 to 5")
            }
        }

        /// Writes `"auto"` or the zoom level as text (`"3"`).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(description)
        }
    }

    /// Where the frames' credit goes: a corner, or nowhere (`none`: only for your own photos and videos).
    /// `"bottom-right"`, …, `"none"` in a job file.
    public enum CreditPosition: Sendable, Hashable, Codable, CustomStringConvertible {
        case corner(CreditCorner)
        case none

        /// Every name, corners first.
        public static let names = CreditCorner.allCases.map(\.rawValue) + ["none"]

        /// A corner's name (`bottom-right`, `bottom-left`, `top-left`, `top-right`) or `none`; nil for anything else.
        public init?(parsing text: String) {
            if text == "none" {
                self = .none
            } else if let c = CreditCorner(rawValue: text) {
                self = .corner(c)
            } else {
                return nil
            }
        }

        /// The corner's name, or `none`.
        public var description: String {
            switch self {
            case .corner(let c): c.rawValue
            case .none: "none"
            }
        }

        /// Reads a corner's name or `none`.
        /// - Throws: `DecodingError.dataCorrupted` for any other text.
        public init(from decoder: any Decoder) throws {
            self = try decoder.singleValueContainer().decodeText(
                takes: "one of \(Self.names.joined(separator: ", "))", CreditPosition.init(parsing:))
        }

        /// Writes the corner's name, or `none`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(description)
        }
    }

    /// `self` with every value set in `other` replacing this one (command-line flags over a job file).
    /// A GIF named after the output (`OUT.gif` beside `OUT.mp4`) follows a new output given in `other`
    /// (`NEW.gif`), unless `other` names a GIF itself.
    public func overridden(by other: HyperlapseSettings) -> HyperlapseSettings {
        var result = self
        if let output, let gif, let newOutput = other.output, other.gif == nil,
            gif.shown == output.replacingExtension(with: ".gif").shown
        {
            result.gif = newOutput.replacingExtension(with: ".gif")
        }
        // Field by field: every value `other` sets replaces this one's (checked or not: a NaN, a zoom of 9 —
        // makeJob reports those). A test walks CodingKeys, so a setting added there and not here fails it.
        func take<Value>(_ key: WritableKeyPath<HyperlapseSettings, Value?>) {
            if let value = other[keyPath: key] { result[keyPath: key] = value }
        }
        take(\.from)
        take(\.to)
        take(\.via)
        take(\.provider)
        take(\.route)
        take(\.source)
        take(\.track)
        take(\.spacing)
        take(\.size)
        take(\.fov)
        take(\.fps)
        take(\.lookAt)
        take(\.headingOffset)
        take(\.keyframes)
        take(\.zoom)
        take(\.crossfade)
        take(\.output)
        take(\.gif)
        take(\.gifWidth)
        take(\.cacheDir)
        take(\.sharedCache)
        take(\.radius)
        take(\.crf)
        take(\.preset)
        take(\.panoHeading)
        take(\.frameStep)
        take(\.keyFile)
        take(\.osrmURL)
        take(\.timeout)
        take(\.stabilize)
        take(\.forward)
        take(\.toneMatch)
        take(\.creditPosition)
        take(\.copyright)
        take(\.includeIndoor)
        take(\.equirectangular)
        take(\.frames)
        take(\.report)
        return result
    }

    /// Reads a job file.
    /// - Throws: ``LapseError`` `.invalidInput` naming the file: missing, not JSON, unknown key or wrong type.
    public static func read(_ file: URL) throws -> HyperlapseSettings {
        let path = file.filePath
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LapseError(
                .invalidInput, path,
                FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw LapseError(.invalidInput, path, "not a JSON object")
        }
        let known = Set(CodingKeys.allCases.map(\.stringValue))
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw LapseError(.invalidInput, path, "unknown key '\(unknown)'")
        }
        do {
            var settings = try JSONDecoder().decode(HyperlapseSettings.self, from: data)
            settings.frames = nil // records of the run that wrote the file, not settings
            settings.report = nil
            return settings
        } catch let DecodingError.typeMismatch(_, context) {
            throw LapseError(
                .invalidInput, path,
                "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw LapseError(
                .invalidInput, path,
                "'\(context.codingPath.map(\.stringValue).joined(separator: "."))': \(context.debugDescription)")
        } catch {
            throw LapseError(.invalidInput, path, "cannot read the job: \(error)")
        }
    }

    /// The settings read from the job file `jobFile` with its outputs (`output`, `gif`) resolved against the job
    /// file's folder, which they may not leave (symbolic links of their folders resolved): a job file from
    /// elsewhere cannot write, or with `--overwrite` replace, a file outside its own folder. What `flags` (the
    /// command line's settings, applied after) set instead is not checked: `-o` and `--gif` go anywhere (and `-o`
    /// replaces a GIF named after the job file's output).
    /// - Throws: ``LapseError`` `.usage` naming the job file and the key whose path leaves its folder.
    public func confiningOutputs(toJobFile jobFile: URL, except flags: HyperlapseSettings) throws
        -> HyperlapseSettings
    {
        let jobPath = jobFile.filePath
        let folder = URL(fileURLWithPath: jobPath).deletingLastPathComponent().standardizedFileURL
            .resolvingSymlinksInPath().path
        func confined(_ key: String, _ location: LocationText) throws -> URL? {
            // Read as the job file spells it (`~` and all), as its message quotes it.
            guard let path = location.quoted else { return nil }
            let expanded = (path as NSString).expandingTildeInPath
            let url =
                expanded.hasPrefix("/")
                ? URL(fileURLWithPath: expanded) : URL(fileURLWithPath: folder).appendingPathComponent(expanded)
            let parent = url.deletingLastPathComponent().standardizedFileURL.resolvingSymlinksInPath().path
            let name = url.standardizedFileURL.lastPathComponent
            guard parent == folder || parent.hasPrefix(folder == "/" ? "/" : folder + "/"), name != "..", name != "."
            else {
                let flag = key == "gif" ? "--gif" : "-o"
                throw LapseError(
                    .usage, jobPath,
                    "'\(key)' (\(path)) is outside the job file's folder \(folder): give \(flag) to write elsewhere")
            }
            return URL(fileURLWithPath: parent).appendingPathComponent(name)
        }
        var s = self
        if flags.output == nil { s.output = try confined("output", _output) }
        let gifFollowsOutput = output.map { $0.replacingExtension(with: ".gif").shown } == gif?.shown
        if flags.gif == nil && !(flags.output != nil && gifFollowsOutput) { s.gif = try confined("gif", _gif) }
        return s
    }

    /// The settings with every file path made absolute (against `directory`, default the current one), so a job
    /// file works from any folder: `route`, `track`, `keyframes`, `keyFile`, `cacheDir`, `output`, `gif` and the
    /// path of `local:` and `video:` sources. URLs and absolute paths are kept.
    public func withAbsolutePaths(
        relativeTo directory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    ) -> HyperlapseSettings {
        func absolute(_ location: URL?) -> URL? {
            guard let location, location.isFileURL, !location.shown.hasPrefix("/") else { return location }
            let expanded = (location.shown as NSString).expandingTildeInPath
            if expanded.hasPrefix("/") { return URL(fileURLWithPath: expanded) }
            return URL(fileURLWithPath: directory.path).appendingPathComponent(expanded).standardizedFileURL
        }
        var s = self
        s.route = absolute(route)
        s.track = absolute(track)
        s.keyframes = absolute(keyframes)
        s.keyFile = absolute(keyFile)
        s.cacheDir = absolute(cacheDir)
        s.output = absolute(output)
        s.gif = absolute(gif)
        switch source {
        case .local(let directory): s.source = .local(directory: absolute(directory) ?? directory)
        case .video(let file): s.source = .video(file: absolute(file) ?? file)
        default: break
        }
        return s
    }

    /// The settings with `output` and `gif` relative to `folder` (the job file's) where they lie in it: the job file
    /// then renders the same video when its folder is moved or copied (``confiningOutputs(toJobFile:except:)`` reads
    /// them against the job file's folder). Other paths stay as they are.
    public func withOutputs(relativeTo folder: URL) -> HyperlapseSettings {
        let base = folder.standardizedFileURL.path
        func relative(_ location: URL?) -> URL? {
            guard let location, location.isFileURL, location.shown.hasPrefix("/") else { return location }
            let standard = location.standardizedFileURL.path
            let prefix = base == "/" ? "/" : base + "/"
            guard standard.hasPrefix(prefix), standard.count > prefix.count else { return location }
            // Written as this text, read against the job file's folder (confiningOutputs).
            return URL(fileURLWithPath: String(standard.dropFirst(prefix.count)))
        }
        var s = self
        s.output = relative(output)
        s.gif = relative(gif)
        return s
    }

    /// The settings as pretty, sorted JSON.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case from, to, via, provider, route, source, track, spacing, size, fov, fps, lookAt, headingOffset, keyframes,
            zoom, crossfade, output, gif, gifWidth, cacheDir, radius, crf, preset, panoHeading, frameStep, keyFile,
            osrmURL,
            timeout, stabilize, forward, toneMatch, creditPosition, copyright, includeIndoor, sharedCache,
            equirectangular, frames, report
    }
}
