// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseNet
import Synchronization

/// Mapillary, the largest open street-level imagery (CC BY-SA 4.0), through its Graph API v4
/// (`https://graph.mapillary.com`, documented at https://www.mapillary.com/developer/api-documentation).
///
/// **Token**: a client access token (`MLY|…`, free from https://www.mapillary.com/dashboard/developers), sent in the
/// `Authorization: OAuth <token>` header the documentation recommends (never in a URL), to the API only: the
/// thumbnail URLs it answers lie on a CDN and are fetched without it.
///
/// **Lookup**: the documented image search, `GET /images?bbox=W,S,E,N&is_pano=true&limit=2000&fields=…`, in boxes
/// along the route: consecutive points are grouped while the box around them stays within ``maxBoxSide`` metres
/// a side plus the radius either side; a box over 0.009 square degrees (the documentation allows under 0.01) and
/// one whose answer fills the documented limit of 2000 images are cut into four and searched again (a full one at
/// most ``maxSplits`` times deep: its answer held only some of the images). Every 360° image (`is_pano`, or
/// `camera_type` `spherical`/`equirectangular`) within `radius` of a point is a candidate, nearest first; the
/// nearest is chosen, or one from the sequence of the previous point's choice when it is at most
/// ``sameSequenceSlack`` metres farther (frames do not jump between two captures of one street), and never one that
/// goes back along a sequence: once two choices in a sequence set which way its capture times run, a candidate of it
/// captured before the last one chosen is passed over (until the route turns back).
///
/// **Pose**: position from `computed_geometry` (structure from motion) over `geometry` (the camera's GPS); heading,
/// tilt and roll from `computed_rotation` (OpenSfM's angle-axis world-to-camera rotation, the world east-north-up,
/// the camera x right, y down, z the picture's centre column), else the heading from `computed_compass_angle` (refined)
/// over `compass_angle` (the camera's), level; ``PanoramaMetadata/headingSource`` says which.
///
/// **Pictures**: `thumb_2048_url` (2048 pixels wide) when the frame needs no wider a panorama, `thumb_original_url`
/// beyond; analysis takes the 2048-pixel one. The URLs expire: one refused with 403 is looked up again
/// (`GET /<id>?fields=thumb_2048_url,thumb_original_url`) and fetched once more. Cached under the image id through
/// ``HTTPCache`` by their `Cache-Control`.
///
/// **Errors**: a token the API refuses (its OAuth error, code 190) is `.denied` with one line saying how to get one;
/// HTTP 429 and the Graph API's rate-limit codes (4, 17, 32, 613) are retried after `Retry-After` or with backoff.
public struct MapillarySource: PanoramaSource {
    /// `mapillary`.
    public let name = "mapillary"
    /// The Graph API root, `https://graph.mapillary.com` by default.
    public let baseURL: URL
    /// How much route a search box may take, metres a side: a box is at most this plus the radius either side
    /// wide. Default 400.
    public var maxBoxSide = 400.0
    /// Images a search asks for (`limit`; the documentation's most is 2000).
    public var searchLimit = 2000
    /// How many times a full answer's box is cut into four and searched again, at most. Default 3.
    public var maxSplits = 3
    /// How much farther (metres) an image from the previous point's sequence may be than the nearest and still be
    /// chosen. Default 5; 0 always takes the nearest (still never going back along a sequence).
    public var sameSequenceSlack = 5.0
    /// The width of `thumb_2048_url`'s picture.
    public static let thumbnailWidth = 2048
    /// The Graph API's root.
    public static let defaultBaseURL = URL(string: "https://graph.mapillary.com")!
    /// The licence of every public Mapillary image.
    public static let license = "CC BY-SA 4.0"
    /// The environment variable holding the token.
    public static let tokenVariable = "MAPILLARY_ACCESS_TOKEN"

    private let token: String
    private let client: HTTPClient
    private let cache: HTTPCache?
    private let warnings: OnceWarnings
    /// Thumbnail URLs looked up again after an expired one, by image id.
    private let refreshed = RefreshedLinks()

    /// - Parameters:
    ///   - token: the client access token (`MLY|…`).
    ///   - baseURL: the Graph API's root (default ``defaultBaseURL``).
    ///   - client: the HTTP client the requests go through.
    ///   - cache: where image metadata and pictures are kept (nil: none).
    ///   - warning: told once per image skipped at lookup (a 360° image that is not 2:1).
    /// - Throws: ``LapseError`` `.denied` for an empty token.
    public init(
        token: String, baseURL: URL = defaultBaseURL, client: HTTPClient = .shared, cache: DiskCache? = nil,
        warning: WarningHandler? = nil
    ) throws {
        let token = token.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw Self.noToken }
        self.token = token
        self.baseURL = baseURL
        self.client = client
        self.cache = cache.map { HTTPCache(cache: $0) }
        warnings = OnceWarnings(warning)
    }

    /// The error of a job without a token.
    public static let noToken = LapseError(
        .denied, "Mapillary",
        "no access token: set \(tokenVariable) to a client token (MLY|…, free from "
            + "https://www.mapillary.com/dashboard/developers)")

    // MARK: Graph API answers

    /// The fields asked for of every image (the API answers only those asked for).
    static let fields = [
        "id", "geometry", "computed_geometry", "compass_angle", "computed_compass_angle", "computed_rotation",
        "camera_type", "is_pano", "captured_at", "width", "height", "creator", "sequence", "thumb_2048_url",
        "thumb_original_url"
    ]

    struct Point: Decodable { var coordinates: [Double]? }
    struct Creator: Decodable {
        var username: String?
        var id: String?
    }
    struct Image: Decodable {
        var id: String
        var geometry: Point?
        var computedGeometry: Point?
        var compassAngle: Double?
        var computedCompassAngle: Double?
        var computedRotation: [Double]?
        var cameraType: String?
        var isPano: Bool?
        var capturedAt: Double?
        var width: Int?
        var height: Int?
        var creator: Creator?
        var sequence: String?
        var thumb2048URL: String?
        var thumbOriginalURL: String?
        enum CodingKeys: String, CodingKey {
            case id, geometry, width, height, creator, sequence
            case computedGeometry = "computed_geometry"
            case compassAngle = "compass_angle"
            case computedCompassAngle = "computed_compass_angle"
            case computedRotation = "computed_rotation"
            case cameraType = "camera_type"
            case isPano = "is_pano"
            case capturedAt = "captured_at"
            case thumb2048URL = "thumb_2048_url"
            case thumbOriginalURL = "thumb_original_url"
        }
    }
    struct Page: Decodable { var data: [Entry] }
    /// One image of a search answer, or what is wrong with it (one malformed image does not fail the search).
    struct Entry: Decodable {
        var image: Image?
        var problem: String?
        init(from decoder: any Decoder) throws {
            do {
                image = try Image(from: decoder)
            } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context),
                let DecodingError.keyNotFound(_, context), let DecodingError.dataCorrupted(context)
            {
                let id = (try? decoder.container(keyedBy: Key.self).decode(String.self, forKey: .id)) ?? "?"
                let field = context.codingPath.last?.stringValue ?? "?"
                problem = "image \(id): field \(field) is not as documented"
            }
        }
        enum Key: String, CodingKey { case id }
    }
    /// The Graph API's error answer: `{"error": {"message", "type", "code", "fbtrace_id"}}`.
    struct GraphError: Decodable {
        struct Body: Decodable {
            var message: String?
            var type: String?
            var code: Int?
        }
        var error: Body
        static func decoded(_ data: Data) -> Body? { try? JSONDecoder().decode(GraphError.self, from: data).error }
    }

    // MARK: Lookup

    /// A 360° image near a point.
    struct Candidate: Sendable {
        var distance: Double
        var panorama: PanoramaMetadata
        /// `captured_at`, milliseconds since 1970; nil when not given (the image then never counts as going back).
        var capturedAt: Double?
    }

    /// A search box (degrees) and the indices of the points it serves.
    struct Box: Equatable {
        var west: Double, south: Double, east: Double, north: Double
        var points: [Int] = []
        func contains(_ c: Coordinate) -> Bool {
            west <= c.longitude && c.longitude <= east && south <= c.latitude && c.latitude <= north
        }
        var quarters: [Box] {
            let mx = (west + east) / 2
            let my = (south + north) / 2
            return [
                Box(west: west, south: south, east: mx, north: my), Box(west: mx, south: south, east: east, north: my),
                Box(west: west, south: my, east: mx, north: north), Box(west: mx, south: my, east: east, north: north)
            ]
        }
    }

    /// The 360° image nearest each coordinate within `radius` metres, nil where there is none; asked by bounding
    /// boxes, a few at a time.
    /// - Throws: `.network` (the token refused, the rate limit after retries), `.invalidInput` (an answer that does
    ///   not parse).
    public func nearest(to coordinates: [Coordinate], radius: Double) async throws -> [PanoramaMetadata?] {
        let boxes = Self.boxes(along: coordinates, radius: radius, maxSide: maxBoxSide + 2.02 * radius)
        var found = [[Candidate]](repeating: [], count: coordinates.count)
        try await withThrowingTaskGroup(of: (Box, [Image]).self) { group in
            for box in boxes { group.addTask { (box, try await self.images(in: box, splits: self.maxSplits)) } }
            for try await (box, images) in group {
                let usable = images.compactMap(candidatePanorama)
                for i in box.points {
                    let c = coordinates[i]
                    found[i] = usable.compactMap { p in
                        let d = c.distance(to: p.panorama.coordinate)
                        return d <= radius
                            ? Candidate(distance: d, panorama: p.panorama, capturedAt: p.capturedAt) : nil
                    }.sorted { ($0.distance, $0.panorama.id) < ($1.distance, $1.panorama.id) }
                }
            }
        }
        let bearings = coordinates.indices.map { i -> Double? in
            guard i > 0, coordinates[i - 1].distance(to: coordinates[i]) > 0.5 else { return nil }
            return coordinates[i - 1].initialBearing(to: coordinates[i])
        }
        return Self.choose(found, bearings: bearings, sameSequenceSlack: sameSequenceSlack)
    }

    /// Consecutive points grouped into boxes no wider than `maxSide` metres a side with `radius` around each point.
    static func boxes(along coordinates: [Coordinate], radius: Double, maxSide: Double) -> [Box] {
        var boxes: [Box] = []
        for (i, c) in coordinates.enumerated() {
            let dLat = radius * 1.01 / 111_320
            let dLon = radius * 1.01 / (111_320 * max(0.01, cos(c.latitude * .pi / 180)))
            let own = Box(
                west: c.longitude - dLon, south: c.latitude - dLat, east: c.longitude + dLon, north: c.latitude + dLat,
                points: [i])
            if var last = boxes.last {
                let grown = Box(
                    west: min(last.west, own.west), south: min(last.south, own.south), east: max(last.east, own.east),
                    north: max(last.north, own.north))
                let metresPerDegree = 111_320 * max(0.01, cos((grown.south + grown.north) / 2 * .pi / 180))
                if (grown.east - grown.west) * metresPerDegree <= maxSide,
                    (grown.north - grown.south) * 111_320 <= maxSide
                {
                    last.west = grown.west
                    last.south = grown.south
                    last.east = grown.east
                    last.north = grown.north
                    last.points.append(i)
                    boxes[boxes.count - 1] = last
                    continue
                }
            }
            boxes.append(own)
        }
        return boxes
    }

    /// The largest box searched at once, square degrees: under the documented 0.01 (a larger box, from a large
    /// radius, is searched in quarters).
    static let maxBoxArea = 0.009

    /// The 360° images in `box`: one search, or the four quarters' when the answer fills the limit (warned about,
    /// once, when it still does after ``maxSplits`` cuts) or the box is larger than the API takes.
    func images(in box: Box, splits: Int) async throws -> [Image] {
        if (box.east - box.west) * (box.north - box.south) > Self.maxBoxArea {
            var all: [String: Image] = [:]
            for quarter in box.quarters {
                for image in try await images(in: quarter, splits: splits) { all[image.id] = image }
            }
            return Array(all.values)
        }
        let url = baseURL.appendingPathComponent("images").appending(queryItems: [
            URLQueryItem(name: "fields", value: Self.fields.joined(separator: ",")),
            URLQueryItem(
                name: "bbox",
                value: [box.west, box.south, box.east, box.north].map { String(format: "%.7f", $0) }.joined(
                    separator: ",")),
            URLQueryItem(name: "is_pano", value: "true"),
            URLQueryItem(name: "limit", value: String(searchLimit))
        ])
        let page = try await graph(url, as: Page.self, maxBodyBytes: 32 << 20)
        let found = page.data.compactMap { entry -> Image? in
            if let problem = entry.problem { warnings.warn("answer " + problem, "Mapillary: \(problem); skipped") }
            return entry.image
        }
        guard page.data.count >= searchLimit else { return found }
        guard splits > 0 else {
            warnings.warn(
                "full",
                String(
                    format: "Mapillary: more than %d 360° images around %.5f,%.5f; some were left out",
                    searchLimit, (box.south + box.north) / 2, (box.west + box.east) / 2))
            return found
        }
        var all: [String: Image] = [:]
        for quarter in box.quarters {
            for image in try await images(in: quarter, splits: splits - 1) { all[image.id] = image }
        }
        return Array(all.values)
    }

    /// The image as a usable 360° panorama and its capture time: a 360° image with a position, 2:1 when its size is
    /// given (one that is not is warned about and left out).
    func candidatePanorama(_ image: Image) -> (panorama: PanoramaMetadata, capturedAt: Double?)? {
        let type = image.cameraType?.lowercased()
        guard image.isPano == true || type == "spherical" || type == "equirectangular",
            let xy = image.computedGeometry?.coordinates ?? image.geometry?.coordinates, xy.count >= 2,
            let here = try? Coordinate(latitude: xy[1], longitude: xy[0]),
            image.thumb2048URL != nil || image.thumbOriginalURL != nil
        else { return nil }
        let w = image.width ?? 0
        let h = image.height ?? 0
        if w > 0, h > 0, w != 2 * h {
            warnings.warn(
                image.id, "Mapillary image \(image.id): a 360° image of \(w)×\(h) is not 2:1 (cropped); skipped")
            return nil
        }
        var heading = 0.0
        var tilt = 0.0
        var roll = 0.0
        let headingSource: String
        if let r = image.computedRotation, r.count == 3, r.allSatisfy(\.isFinite),
            let pose = Self.pose(fromComputedRotation: SIMD3(r[0], r[1], r[2]))
        {
            (heading, tilt, roll) = pose
            headingSource = "computed_rotation"
        } else if let a = image.computedCompassAngle, a.isFinite {
            heading = a
            headingSource = "computed_compass_angle"
        } else if let a = image.compassAngle, a.isFinite {
            heading = a
            headingSource = "compass_angle"
        } else {
            headingSource = "none"
        }
        let date = image.capturedAt.map { ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: $0 / 1000)) }
        return (
            PanoramaMetadata(
                source: name, id: image.id, coordinate: here, date: date, heading: normalizeDegrees(heading),
                tilt: tilt, roll: roll, width: w > 0 ? w : Self.thumbnailWidth,
                height: h > 0 ? h : Self.thumbnailWidth / 2,
                license: Self.license, author: Self.author(image.creator), imageURL: image.thumbOriginalURL,
                headingSource: headingSource, collection: image.sequence, smallImageURL: image.thumb2048URL),
            image.capturedAt.flatMap { $0.isFinite ? $0 : nil }
        )
    }

    /// Who to credit: the creator's username, else "Mapillary contributor" and their id (every image has a creator
    /// the licence asks to credit).
    static func author(_ creator: Creator?) -> String {
        if let name = creator?.username?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty { return name }
        return "Mapillary contributor" + (creator?.id.map { " \($0)" } ?? "")
    }

    /// Heading, tilt and roll (degrees, as ``PanoramaMetadata``'s) of the camera whose world-to-camera rotation is
    /// the angle-axis vector `r` (radians; OpenSfM's convention, which Mapillary's `computed_rotation` follows:
    /// x_camera = R · x_world, the world east-north-up, the camera x right, y down, z forward — for a spherical
    /// image the centre column). Nil for a vector whose forward axis is vertical (no heading).
    /// Rodrigues' formula: R = I + sin θ · K + (1 − cos θ) · K², K the cross-product matrix of the unit axis.
    public static func pose(fromComputedRotation r: SIMD3<Double>) -> (heading: Double, tilt: Double, roll: Double)? {
        let theta = (r * r).sum().squareRoot()
        var rows = [SIMD3<Double>(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1)]
        if theta > 1e-12 {
            let k = r / theta
            let s = sin(theta)
            let c = 1 - cos(theta)
            rows = [
                SIMD3(1 - c * (k.y * k.y + k.z * k.z), -s * k.z + c * k.x * k.y, s * k.y + c * k.x * k.z),
                SIMD3(s * k.z + c * k.x * k.y, 1 - c * (k.x * k.x + k.z * k.z), -s * k.x + c * k.y * k.z),
                SIMD3(-s * k.y + c * k.x * k.z, s * k.x + c * k.y * k.z, 1 - c * (k.x * k.x + k.y * k.y))
            ]
        }
        // The rows of R are the camera's axes in the world: right, down, forward.
        let right = rows[0]
        let down = rows[1]
        let forward = rows[2]
        let horizontal = (forward.x * forward.x + forward.y * forward.y).squareRoot()
        guard horizontal > 1e-9 else { return nil }
        let degrees = 180 / Double.pi
        let heading = normalizeDegrees(atan2(forward.x, forward.y) * degrees)
        let tilt = atan2(forward.z, horizontal) * degrees
        let roll = atan2(-right.z, -down.z) * degrees
        return (heading, tilt, roll)
    }

    /// One panorama per point from its candidates (nearest first): the nearest, or the nearest from the sequence of
    /// the previous point's choice when at most `sameSequenceSlack` metres farther; never an image of a sequence
    /// captured on the far side of the last one chosen from it, the way its choices have run (known once two of its
    /// images with capture times were chosen, and forgotten where the route turns back: `bearings`, the route's
    /// compass bearing at each point, nil where unknown, turning by more than 120° from where the way was set).
    static func choose(
        _ candidates: [[Candidate]], bearings: [Double?] = [], sameSequenceSlack: Double
    ) -> [PanoramaMetadata?] {
        /// Per sequence: the capture time last chosen, +1 / −1 / 0 (later, earlier, not known yet), and the route's
        /// bearing where that was set.
        var runs: [String: (last: Double, direction: Double, bearing: Double?)] = [:]
        var current: String?
        return candidates.enumerated().map { k, list in
            let bearing = k < bearings.count ? bearings[k] : nil
            for (name, run) in runs where run.direction != 0 {
                if let b = bearing, let set = run.bearing, abs(angleDifference(from: set, to: b)) > 120 {
                    runs[name] = (run.last, 0, nil)
                }
            }
            let ahead = list.filter { c in
                guard let name = c.panorama.collection, let run = runs[name], run.direction != 0,
                    let t = c.capturedAt
                else { return true }
                return (t - run.last) * run.direction >= 0
            }
            guard let best = ahead.first else { return nil }
            var pick = best
            if let current, best.panorama.collection != current,
                let same = ahead.first(where: {
                    $0.panorama.collection == current && $0.distance <= best.distance + sameSequenceSlack
                })
            {
                pick = same
            }
            if let name = pick.panorama.collection, let t = pick.capturedAt {
                if var run = runs[name] {
                    if t != run.last, run.direction == 0 {
                        (run.direction, run.bearing) = (t > run.last ? 1 : -1, bearing)
                    }
                    run.last = t
                    runs[name] = run
                } else {
                    runs[name] = (t, 0, nil)
                }
            }
            current = pick.panorama.collection
            return pick.panorama
        }
    }

    // MARK: Images

    enum Thumbnail: String {
        case small = "2048"
        case original
    }

    /// The picture, `thumb_2048_url`'s when `resolution` asks for no more than 2048 pixels, else the original.
    /// - Throws: ``LapseError`` `.notFound` without a picture link, the download's errors, `.invalidInput` for a
    ///   picture that does not decode or is not 2:1.
    public func image(for panorama: PanoramaMetadata, resolution: PanoramaResolution) async throws -> PanoramaImage {
        let picture = try await decoded(panorama, resolution)
        return PanoramaImage(
            metadata: picture.metadata,
            pixels: try picture.image.pixels(width: picture.width, height: picture.width / 2),
            tilesDownloaded: picture.downloaded, tilesFromCache: 1 - picture.downloaded)
    }

    /// As ``image(for:resolution:)``, straight from the JPEG's planes to Y′CbCr; nil for a picture that needs the
    /// RGBA path.
    public func yuvImage(for panorama: PanoramaMetadata, resolution: PanoramaResolution, region: PanoramaRegion?)
        async throws -> PanoramaImage?
    {
        let picture = try await decoded(panorama, resolution)
        guard let yuv = try picture.image.yuv(width: picture.width, height: picture.width / 2) else { return nil }
        return PanoramaImage(
            metadata: picture.metadata, picture: .yuv(yuv), tilesDownloaded: picture.downloaded,
            tilesFromCache: 1 - picture.downloaded)
    }

    /// The 2048-pixel picture (the original when there is none) decoded at reduced scale.
    public func analysisImage(for panorama: PanoramaMetadata, width: Int) async throws -> PanoramaImage {
        let thumbnail: Thumbnail = panorama.smallImageURL == nil ? .original : .small
        let (data, downloaded) = try await download(thumbnail, of: panorama)
        let known = thumbnail == .small ? Self.thumbnailWidth : max(panorama.width, width)
        let decoded = try DecodedImage(
            data: [UInt8](data), name: "Mapillary image \(panorama.id)",
            reduction: LocalPhotoSource.reduction(from: known, to: width))
        let w = try Self.frameWidth(of: decoded, panorama)
        return PanoramaImage(
            metadata: panorama, pixels: try decoded.pixels(width: w, height: w / 2, accurate: false),
            tilesDownloaded: downloaded, tilesFromCache: 1 - downloaded)
    }

    /// The thumbnail `resolution` asks for, downloaded or from the cache, and decoded; the width to deliver, the
    /// metadata with the picture's size, and whether it was downloaded.
    private func decoded(_ panorama: PanoramaMetadata, _ resolution: PanoramaResolution) async throws
        -> (image: DecodedImage, width: Int, metadata: PanoramaMetadata, downloaded: Int)
    {
        let thumbnail = Self.thumbnail(for: panorama, resolution: resolution)
        let (data, downloaded) = try await download(thumbnail, of: panorama)
        let decoded = try DecodedImage(data: [UInt8](data), name: "Mapillary image \(panorama.id)")
        let full = try Self.frameWidth(of: decoded, panorama)
        let (w, _) = LocalPhotoSource.size(for: resolution, width: full, height: full / 2)
        var metadata = panorama
        metadata.width = full
        metadata.height = full / 2
        return (decoded, w, metadata, downloaded)
    }

    /// `thumb_2048_url`'s picture when the panorama wanted is no wider, else the original.
    static func thumbnail(for panorama: PanoramaMetadata, resolution: PanoramaResolution) -> Thumbnail {
        guard panorama.smallImageURL != nil else { return .original }
        guard panorama.imageURL != nil else { return .small }
        switch resolution {
        case .full: return .original
        case .atLeast(let w): return w <= thumbnailWidth ? .small : .original
        case .zoom(let z): return 512 << max(0, min(z, 6)) <= thumbnailWidth ? .small : .original
        }
    }

    /// The picture's width. - Throws: ``LapseError`` `.invalidInput` when it is not 2:1.
    static func frameWidth(of decoded: DecodedImage, _ panorama: PanoramaMetadata) throws -> Int {
        let w = decoded.displayWidth
        let h = decoded.displayHeight
        guard w == 2 * h else {
            throw LapseError(
                .invalidInput, "Mapillary image \(panorama.id)", "not equirectangular: \(w)×\(h) is not 2:1")
        }
        return w
    }

    /// The thumbnail's bytes, from the cache or downloaded (then cached by its `Cache-Control`), and whether they
    /// were downloaded (1 or 0). An expired URL (403) is looked up again and fetched once more.
    private func download(_ thumbnail: Thumbnail, of panorama: PanoramaMetadata) async throws -> (Data, Int) {
        let subject = "Mapillary image \(panorama.id)"
        let known = refreshed.links(panorama.id)
        let link =
            thumbnail == .small
            ? (known?.small ?? panorama.smallImageURL) : (known?.original ?? panorama.imageURL)
        guard let link, let url = URL(string: link) else {
            throw LapseError(.notFound, subject, "no \(thumbnail == .small ? "thumb_2048_url" : "thumb_original_url")")
        }
        do {
            return try await fetch(url, thumbnail, of: panorama)
        } catch let error as LapseError where error.cause == .http(403) {
            // Another task may have looked it up again meanwhile: its URL first, else a lookup of our own.
            let latest = refreshed.links(panorama.id)
            let newer = (thumbnail == .small ? latest?.small : latest?.original).flatMap(URL.init(string:))
            if let newer, newer != url { return try await fetch(newer, thumbnail, of: panorama) }
            let fresh = try await thumbnailURLs(of: panorama.id)
            refreshed.set(panorama.id, fresh)
            guard let again = (thumbnail == .small ? fresh.small : fresh.original).flatMap(URL.init(string:)) else {
                throw error
            }
            return try await fetch(again, thumbnail, of: panorama)
        }
    }

    private func fetch(_ url: URL, _ thumbnail: Thumbnail, of panorama: PanoramaMetadata) async throws -> (Data, Int) {
        let subject = "Mapillary image \(panorama.id)"
        let check: (HTTPResponse) throws -> Void = { response in
            if response.status == 403 {
                throw LapseError(
                    .denied, subject, "the picture's URL was refused (HTTP 403: expired)", cause: .http(403))
            }
            try response.requireSuccess(subject, hiding: [token])
        }
        if let cache {
            let (data, fromCache) = try await cache.get(
                url, key: CacheKey("mapillary", cacheHost, panorama.id, thumbnail.rawValue + ".jpg"), client: client,
                validate: CacheValidation.jpeg, check: check)
            return (data, fromCache ? 0 : 1)
        }
        let response = try await client.get(url, accept: { CacheValidation.jpeg($0.body) })
        try check(response)
        return (response.body, 1)
    }

    /// The API's host (and port), so that a mirror's or a stand-in's pictures are never taken for the service's.
    var cacheHost: String {
        let host = baseURL.host ?? "host"
        return baseURL.port.map { "\(host)-\($0)" } ?? host
    }

    /// The image's thumbnail URLs, looked up now (`GET /<id>?fields=thumb_2048_url,thumb_original_url`).
    func thumbnailURLs(of id: String) async throws -> (small: String?, original: String?) {
        let url = baseURL.appendingPathComponent(id).appending(queryItems: [
            URLQueryItem(name: "fields", value: "id,thumb_2048_url,thumb_original_url")
        ])
        let image = try await graph(url, as: Image.self, maxBodyBytes: 1 << 20)
        return (image.thumb2048URL, image.thumbOriginalURL)
    }

    // MARK: Graph API requests

    /// GET a Graph API answer with the token, its errors said in one line.
    func graph<Answer: Decodable>(_ url: URL, as: Answer.Type, maxBodyBytes: Int) async throws -> Answer {
        let subject = "Mapillary " + client.subject(url)
        let response = try await client.get(
            url, headers: ["Authorization": "OAuth \(token)"], temporaryRefusal: Self.temporaryRefusal,
            maxBodyBytes: maxBodyBytes)
        if !response.isSuccess {
            if let e = GraphError.decoded(response.body) {
                let message = Redaction.message(e.message ?? "HTTP \(response.status)", hiding: [token])
                if response.status == 401 || [102, 104, 190].contains(e.code ?? 0) {
                    throw LapseError(
                        .denied, "Mapillary",
                        "the access token was refused (\(message)): set \(Self.tokenVariable) to a client token "
                            + "(MLY|…) from https://www.mapillary.com/dashboard/developers",
                        cause: .http(response.status))
                }
                throw LapseError(
                    response.status == 404 ? .notFound : response.status == 403 ? .denied : .network, subject,
                    "HTTP \(response.status): \(message)", cause: .http(response.status))
            }
            try response.requireSuccess(subject, hiding: [token])
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: response.body)
        } catch {
            throw LapseError(.network, subject, "unusable answer (not the documented JSON)")
        }
    }

    /// The Graph API's rate-limit answers that are not HTTP 429 (error codes 4, 17, 32, 613: "request limit
    /// reached"), to be retried with backoff.
    static let temporaryRefusal: @Sendable (HTTPResponse) -> String? = { response in
        guard !response.isSuccess, let e = GraphError.decoded(response.body), let code = e.code,
            [4, 17, 32, 613].contains(code)
        else { return nil }
        return "rate limited (error \(code))"
    }
}

/// Thumbnail URLs looked up again after an expired one, by image id.
private final class RefreshedLinks: Sendable {
    private let map = Mutex<[String: (small: String?, original: String?)]>([:])
    func links(_ id: String) -> (small: String?, original: String?)? { map.withLock { $0[id] } }
    func set(_ id: String, _ links: (small: String?, original: String?)) { map.withLock { $0[id] = links } }
}
