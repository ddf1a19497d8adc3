// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseNet
import Synchronization

/// Panoramax, the open street-level imagery federation, through its STAC API (no key): the public
/// meta-catalogue or any GeoVisio instance.
///
/// **Lookup** (GeoVisio's `GET /api/search`, STAC item search with GeoVisio's place parameters): for each
/// point `search?place_position=LON,LAT&place_distance=0-R&place_fov_tolerance=2&limit=100`, R the radius
/// rounded up to whole metres (the API takes whole metres and would otherwise leave out the 3 m nearest).
/// GeoVisio answers the pictures in that ring nearest first (ordered by planar distance in degrees, its
/// `geom <-> point`) and, for flat pictures, only those looking at the point within `place_fov_tolerance / 2`
/// degrees (360° pictures are never left out by it): the smallest tolerance keeps most flat pictures out, as
/// the search has no 360° filter of its own. Only 360° pictures (`pers:interior_orientation.fieldOfView ==
/// 360`) within the radius are candidates. While a full page holds no usable candidate, the next page is
/// asked for: the answer's `links` entry with `rel` `next` (STAC paging) when there is one, else the same search
/// from the nearest distance a later picture can have (`place_distance=D-R`; GeoVisio's search has no paging
/// links); at most ``maxPages`` requests a point. Of the candidates the nearest is chosen — or one from the
/// previous point's capture run (`collection`) when it is at most ``sameRunSlack`` metres farther, so that
/// consecutive frames do not jump across the road or between dates.
///
/// **Metadata**: heading from `view:azimuth` (`headingSource` `view:azimuth`; GeoVisio fills a missing one from
/// the bearing to the next picture of the run), or unknown (`none`, heading 0: a placeholder for the hyperlapse
/// to estimate); tilt from `pers:pitch` and roll from `pers:roll` when given (GPano `PosePitchDegrees` and
/// `PoseRollDegrees`, the senses of ``PanoramaMetadata/tilt`` and ``PanoramaMetadata/roll``); size from
/// `sensor_array_dimensions`; `license` and the producer (`providers` with role `producer`, or
/// `geovisio:producer`) for attribution; `collection` as the capture run.
///
/// **Cropped 360° pictures** (GoPro and Insta360 pictures without the nadir, a trimmed zenith): with
/// `visible_area` (`[left, top, right, bottom]` margins of the full `sensor_array_dimensions` frame) the picture
/// is delivered placed in its full 2:1 frame, the missing rows (and columns) black. A 360° picture that is not 2:1
/// and says nothing of where it sits is skipped with a warning (once per picture), the next candidate used.
///
/// **Images**: the `sd` asset (2048 pixels wide) when the panorama wanted is no wider than 2048 pixels (of the
/// full frame), else the `hd` asset (the original); each cached under its own key. Motion analysis takes the `sd`
/// asset.
public struct PanoramaxSource: PanoramaSource {
    /// `panoramax`.
    public let name = "panoramax"
    /// The API root, e.g. `https://api.panoramax.xyz/api` (the public meta-catalogue, the default).
    public let baseURL: URL
    /// Search requests per point at most (the first page and the pages after it), ≥ 1. Default 5.
    public var maxPages = 5
    /// Pictures asked for per search request (`limit`, 1…10 000 for GeoVisio). Default 100.
    public var pageSize = 100
    /// How much farther (metres) a candidate from the previous point's capture run may be than the nearest and still
    /// be chosen. Default 3; 0 always takes the nearest.
    public var sameRunSlack = 3.0
    /// The width of the `sd` asset, pixels (GeoVisio: "Picture in standard definition (fixed width of 2048px)").
    public static let standardWidth = 2048
    private let client: HTTPClient
    private let cache: DiskCache?
    private let warnings: OnceWarnings

    /// The public Panoramax instance's API root.
    public static let defaultBaseURL = URL(string: "https://api.panoramax.xyz/api")!

    /// - Parameters:
    ///   - baseURL: the instance's API root (default ``defaultBaseURL``).
    ///   - client: the HTTP client the requests go through.
    ///   - cache: where answers and pictures are kept (nil: none).
    ///   - warning: told once per picture skipped at lookup (a cropped 360° picture that cannot be placed).
    public init(
        baseURL: URL = defaultBaseURL, client: HTTPClient = .shared, cache: DiskCache? = nil,
        warning: WarningHandler? = nil
    ) {
        self.baseURL = baseURL
        self.client = client
        self.cache = cache
        warnings = OnceWarnings(warning)
    }

    // MARK: STAC answer

    /// A number GeoVisio may write as a JSON number or as a string (cropping values come from XMP text).
    struct Number: Decodable {
        var value: Double
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let d = try? c.decode(Double.self) {
                value = d
            } else if let s = try? c.decode(String.self),
                let d = NumberText.decimal(s.trimmingCharacters(in: .whitespaces))
            {
                value = d
            } else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a number")
            }
        }
        var int: Int? { value.isFinite && abs(value) < 1e9 ? Int(value.rounded()) : nil }
    }
    struct Link: Decodable {
        var rel: String?
        var href: String?
        var method: String?
    }
    struct ItemCollection: Decodable {
        var features: [Item]
        var links: [Link]?
    }
    struct Item: Decodable {
        struct Geometry: Decodable { var coordinates: [Double]? }
        struct Asset: Decodable { var href: String? }
        struct Provider: Decodable {
            var name: String?
            var roles: [String]?
        }
        struct Orientation: Decodable {
            var fieldOfView: Number?
            var sensorArrayDimensions: [Number]?
            var visibleArea: [Number]?
            enum CodingKeys: String, CodingKey {
                case fieldOfView = "field_of_view"
                case sensorArrayDimensions = "sensor_array_dimensions"
                case visibleArea = "visible_area"
            }
        }
        struct Properties: Decodable {
            var datetime: String?
            var azimuth: Number?
            var pitch: Number?
            var roll: Number?
            var orientation: Orientation?
            var license: String?
            var producer: String?
            enum CodingKeys: String, CodingKey {
                case datetime, license
                case azimuth = "view:azimuth"
                case pitch = "pers:pitch"
                case roll = "pers:roll"
                case orientation = "pers:interior_orientation"
                case producer = "geovisio:producer"
            }
        }
        var id: String
        var geometry: Geometry?
        var properties: Properties?
        var assets: [String: Asset]?
        var providers: [Provider]?
        var collection: String?
    }

    // MARK: Lookup

    /// A usable 360° picture near a point.
    struct Candidate: Sendable {
        var distance: Double
        var panorama: PanoramaMetadata
    }

    /// The 360° picture nearest each coordinate within `radius` metres, nil where there is none; asked by bounding
    /// boxes, a few at a time.
    /// - Throws: `.network`, `.invalidInput` (an answer that does not parse).
    public func nearest(to coordinates: [Coordinate], radius: Double) async throws -> [PanoramaMetadata?] {
        let unique = Array(Set(coordinates))
        var found: [Coordinate: [Candidate]] = [:]
        try await withThrowingTaskGroup(of: (Coordinate, [Candidate]).self) { group in
            for c in unique { group.addTask { (c, try await self.candidates(near: c, radius: radius)) } }
            for try await (c, list) in group { found[c] = list }
        }
        return Self.choose(coordinates.map { found[$0] ?? [] }, sameRunSlack: sameRunSlack)
    }

    /// One panorama per point from its candidates (nearest first): the nearest, or the nearest from the capture run
    /// of the previous point's choice when it is at most `sameRunSlack` metres farther.
    static func choose(_ candidates: [[Candidate]], sameRunSlack: Double) -> [PanoramaMetadata?] {
        var run: String?
        return candidates.map { list in
            guard let best = list.first else { return nil }
            var pick = best
            if let run, best.panorama.collection != run,
                let same = list.first(where: {
                    $0.panorama.collection == run && $0.distance <= best.distance + sameRunSlack
                })
            {
                pick = same
            }
            run = pick.panorama.collection
            return pick.panorama
        }
    }

    /// The usable 360° pictures within `radius` of `c`, nearest first: as many pages as it takes (at most
    /// ``maxPages``) to have one, and every one up to ``sameRunSlack`` metres farther than it.
    func candidates(near c: Coordinate, radius: Double) async throws -> [Candidate] {
        let outer = Int(radius.rounded(.up))
        // Metres per degree of the planar distance the search orders by, at least (a degree of longitude is the
        // shorter): a picture `d` degrees away lies at least `d · metresPerDegree` metres away.
        let metresPerDegree = 111_320 * max(0.01, cos(c.latitude * .pi / 180))
        var url = searchURL(c, from: 0, to: outer)
        var lower = 0
        var pages = 0
        var seen = Set<String>()
        var found: [Candidate] = []
        while true {
            let page = try await client.getJSON(url, as: ItemCollection.self, maxBodyBytes: 16 << 20)
            pages += 1
            var farthest = 0.0 // degrees
            for item in page.features {
                guard let xy = item.geometry?.coordinates, xy.count >= 2 else { continue }
                farthest = max(
                    farthest,
                    ((xy[0] - c.longitude) * (xy[0] - c.longitude) + (xy[1] - c.latitude) * (xy[1] - c.latitude))
                        .squareRoot())
                guard seen.insert(item.id).inserted, let candidate = candidate(item, near: c, radius: radius) else {
                    continue
                }
                found.append(candidate)
            }
            guard page.features.count >= pageSize, pages < max(1, maxPages) else { break }
            // Pictures on later pages lie no nearer than this.
            let nearestLater = farthest * metresPerDegree
            if nearestLater > radius { break }
            if let best = found.map(\.distance).min(), nearestLater > best + sameRunSlack { break }
            if let next = page.links?.first(where: { $0.rel == "next" && ($0.method ?? "GET").uppercased() == "GET" }),
                let href = next.href, let nextURL = URL(string: href, relativeTo: baseURL)?.absoluteURL
            {
                url = nextURL
            } else {
                // No paging link: the same search again from where later pictures begin (0.5 % short, as the
                // server measures on the ellipsoid), those seen already skipped.
                let from = Int((nearestLater * 0.995).rounded(.down))
                guard from > lower else { break }
                lower = from
                url = searchURL(c, from: from, to: outer)
            }
        }
        return found.sorted { $0.distance < $1.distance }
    }

    func searchURL(_ c: Coordinate, from: Int, to: Int) -> URL {
        baseURL.appendingPathComponent("search").appending(queryItems: [
            URLQueryItem(name: "place_position", value: String(format: "%.7f,%.7f", c.longitude, c.latitude)),
            URLQueryItem(name: "place_distance", value: "\(from)-\(max(from, to))"),
            URLQueryItem(name: "place_fov_tolerance", value: "2"),
            URLQueryItem(name: "limit", value: String(max(1, pageSize)))
        ])
    }

    /// The item as a candidate: a 360° picture within `radius` of `c` with an image, placeable in a 2:1 frame
    /// (one that is not is warned about and left out).
    func candidate(_ item: Item, near c: Coordinate, radius: Double) -> Candidate? {
        let p = item.properties
        guard let o = p?.orientation, o.fieldOfView?.value == 360,
            let xy = item.geometry?.coordinates, xy.count >= 2,
            let here = try? Coordinate(latitude: xy[1], longitude: xy[0])
        else { return nil }
        let d = c.distance(to: here)
        guard d <= radius else { return nil }
        let hd = item.assets?["hd"]?.href
        let sd = item.assets?["sd"]?.href
        guard let image = hd ?? sd else { return nil }
        let dims = o.sensorArrayDimensions.map { $0.compactMap(\.int) }.flatMap { $0.count == 2 ? $0 : nil }
        var crop: PanoramaCrop?
        if let margins = o.visibleArea.map({ $0.compactMap(\.int) }), margins.count == 4, margins != [0, 0, 0, 0] {
            guard let dims else {
                warnings.warn(
                    item.id,
                    """
                    Panoramax picture \(item.id): visible_area without sensor_array_dimensions, the picture \
                    cannot be placed in its full frame; skipped
                    """
                )
                return nil
            }
            do {
                let placed = try PanoramaCrop(sensorArrayDimensions: dims, visibleArea: margins)
                crop = placed.isWhole ? nil : placed
            } catch let error as LapseError {
                warnings.warn(
                    item.id,
                    """
                    Panoramax picture \(item.id): cannot be placed in its full frame (visible_area \(margins), \
                    \(error.reason)); skipped
                    """
                )
                return nil
            } catch {
                return nil
            }
        } else if let dims, dims[0] != 2 * dims[1] {
            warnings.warn(
                item.id,
                """
                Panoramax picture \(item.id): a 360° picture of \(dims[0])×\(dims[1]) is not 2:1 and has no \
                visible_area to place it by; skipped
                """
            )
            return nil
        }
        let author = item.providers?.first(where: { $0.roles?.contains("producer") == true })?.name ?? p?.producer
        let azimuth = p?.azimuth?.value
        return Candidate(
            distance: d,
            panorama: PanoramaMetadata(
                source: name, id: item.id, coordinate: here, date: p?.datetime,
                heading: normalizeDegrees(azimuth ?? 0), tilt: p?.pitch?.value ?? 0, roll: p?.roll?.value ?? 0,
                width: crop?.fullWidth ?? dims?[0] ?? 0, height: crop?.fullHeight ?? dims?[1] ?? 0,
                license: p?.license, author: author, imageURL: image,
                headingSource: azimuth == nil ? "none" : "view:azimuth", crop: crop, collection: item.collection,
                smallImageURL: sd))
    }

    // MARK: Images

    /// The picture, the `sd` asset when `resolution` asks for no more than its width (``standardWidth`` of the
    /// picture, more for a frame wider than a cropped picture), else the `hd` asset; a cropped picture placed in its
    /// full 2:1 frame, the missing part black.
    /// - Throws: ``LapseError`` `.notFound` without an image link, the download's errors, `.invalidInput` for an
    ///   image that does not decode or is not 2:1 (or not the shape its `visible_area` says).
    public func image(for panorama: PanoramaMetadata, resolution: PanoramaResolution) async throws -> PanoramaImage {
        let picture = try await decoded(panorama, resolution)
        return PanoramaImage(
            metadata: picture.metadata,
            pixels: try Self.pixels(of: picture.image, panorama: panorama, frameWidth: picture.width),
            tilesDownloaded: picture.downloaded, tilesFromCache: 1 - picture.downloaded)
    }

    /// As ``image(for:resolution:)``, straight from the JPEG's planes to Y′CbCr (``DecodedImage/yuv(width:height:)``);
    /// nil for a cropped picture (placed in its frame in RGBA) and one that needs the RGBA path (an EXIF turn, RGB).
    public func yuvImage(for panorama: PanoramaMetadata, resolution: PanoramaResolution, region: PanoramaRegion?)
        async throws -> PanoramaImage?
    {
        guard panorama.crop == nil else { return nil }
        let picture = try await decoded(panorama, resolution)
        guard let yuv = try picture.image.yuv(width: picture.width, height: picture.width / 2) else { return nil }
        return PanoramaImage(
            metadata: picture.metadata, picture: .yuv(yuv), tilesDownloaded: picture.downloaded,
            tilesFromCache: 1 - picture.downloaded)
    }

    /// The asset `resolution` asks for (``asset(for:resolution:)``), downloaded or from the cache, and decoded;
    /// the width of the full frame to deliver, the metadata with the frame's size, and whether it was downloaded.
    private func decoded(_ panorama: PanoramaMetadata, _ resolution: PanoramaResolution) async throws
        -> (image: DecodedImage, width: Int, metadata: PanoramaMetadata, downloaded: Int)
    {
        let (data, downloaded) = try await download(Self.asset(for: panorama, resolution: resolution), of: panorama)
        let decoded = try DecodedImage(data: [UInt8](data), name: "Panoramax picture \(panorama.id)")
        let frameWidth = try Self.frameWidth(of: decoded, panorama: panorama)
        let (w, _) = LocalPhotoSource.size(for: resolution, width: frameWidth, height: frameWidth / 2)
        var metadata = panorama
        metadata.width = frameWidth
        metadata.height = frameWidth / 2
        return (decoded, w, metadata, downloaded)
    }

    /// The `sd` picture (the `hd` one when there is no `sd`) decoded at reduced scale, a cropped one placed in its
    /// frame.
    public func analysisImage(for panorama: PanoramaMetadata, width: Int) async throws -> PanoramaImage {
        let asset: Asset = panorama.smallImageURL == nil ? .hd : .sd
        let (data, downloaded) = try await download(asset, of: panorama)
        let picture = panorama.crop.map(\.width) ?? panorama.width
        let known = asset == .sd ? Self.standardWidth : (picture > 0 ? picture : 4 * width)
        let needed =
            panorama.crop.map { Int((Double(width) * Double($0.width) / Double($0.fullWidth)).rounded(.up)) } ?? width
        let decoded = try DecodedImage(
            data: [UInt8](data), name: "Panoramax picture \(panorama.id)",
            reduction: LocalPhotoSource.reduction(from: known, to: needed))
        let frameWidth = try Self.frameWidth(of: decoded, panorama: panorama)
        return PanoramaImage(
            metadata: panorama,
            pixels: try Self.pixels(of: decoded, panorama: panorama, frameWidth: frameWidth, accurate: false),
            tilesDownloaded: downloaded, tilesFromCache: 1 - downloaded)
    }

    enum Asset: String { case sd, hd }

    /// `sd` when the full frame wanted is no wider than the `sd` asset gives, else `hd`.
    static func asset(for panorama: PanoramaMetadata, resolution: PanoramaResolution) -> Asset {
        guard panorama.smallImageURL != nil else { return .hd }
        let wanted: Int
        switch resolution {
        case .full: return .hd
        case .atLeast(let w): wanted = w
        case .zoom(let z): wanted = 512 << max(0, min(z, 6))
        }
        let frame = panorama.crop.map { standardWidth * $0.fullWidth / $0.width } ?? standardWidth
        return wanted <= frame ? .sd : .hd
    }

    /// The width of the full frame `decoded` fills (a cropped picture: scaled as the picture is).
    /// - Throws: ``LapseError`` `.invalidInput` when it is not 2:1, or not the shape its crop says.
    static func frameWidth(of decoded: DecodedImage, panorama: PanoramaMetadata) throws -> Int {
        let w = decoded.displayWidth
        let h = decoded.displayHeight
        guard let crop = panorama.crop else {
            guard w == 2 * h else {
                throw LapseError(
                    .invalidInput, "Panoramax picture \(panorama.id)", "not equirectangular: \(w)×\(h) is not 2:1")
            }
            return w
        }
        let scale = Double(w) / Double(crop.width)
        let expected = Double(crop.height) * scale
        guard abs(Double(h) - expected) <= max(2, 0.01 * expected) else {
            throw LapseError(
                .invalidInput, "Panoramax picture \(panorama.id)",
                """
                \(w)×\(h) is not the shape of its visible area (\(crop.width)×\(crop.height) of \
                \(crop.fullWidth)×\(crop.fullHeight))
                """
            )
        }
        return max(2, Int((Double(crop.fullWidth) * scale).rounded()) & ~1)
    }

    /// The picture as a full 2:1 frame `frameWidth` wide: scaled, and for a cropped one placed with black around.
    static func pixels(of decoded: DecodedImage, panorama: PanoramaMetadata, frameWidth: Int, accurate: Bool = true)
        throws -> PixelBuffer
    {
        guard let crop = panorama.crop else {
            return try decoded.pixels(width: frameWidth, height: frameWidth / 2, accurate: accurate)
        }
        let r = crop.rectangle(inFrameOfWidth: frameWidth)
        return crop.frame(
            width: frameWidth, placing: try decoded.pixels(width: r.width, height: r.height, accurate: accurate))
    }

    /// The asset's bytes, from the cache or downloaded (then cached), and whether they were downloaded (1 or 0).
    private func download(_ asset: Asset, of panorama: PanoramaMetadata) async throws -> (Data, Int) {
        let href = asset == .sd ? panorama.smallImageURL : panorama.imageURL
        guard let href, let url = URL(string: href, relativeTo: baseURL)?.absoluteURL else {
            throw LapseError(.notFound, "Panoramax picture \(panorama.id)", "no \(asset.rawValue) image link")
        }
        let key = CacheKey("panoramax", panorama.id, asset.rawValue + ".jpg")
        if let data = cache?.data(for: key, validate: CacheValidation.jpeg) { return (data, 0) }
        let response = try await client.get(url, accept: { CacheValidation.jpeg($0.body) })
        try response.requireSuccess(client.subject(url))
        try? cache?.store(response.body, for: key)
        return (response.body, 1)
    }
}

/// A warning handler that passes each subject's warning on once.
final class OnceWarnings: Sendable {
    private let handler: WarningHandler?
    private let seen = Mutex<Set<String>>([])

    init(_ handler: WarningHandler?) { self.handler = handler }

    func warn(_ subject: String, _ message: String) {
        guard let handler, seen.withLock({ $0.insert(subject).inserted }) else { return }
        handler(message)
    }
}
