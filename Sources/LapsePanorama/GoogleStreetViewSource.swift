// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseNet
import Synchronization

/// Google Street View through the official Map Tiles API.
///
/// Protocol (Map Tiles API, "Street View tiles"): `POST /v1/createSession` with `mapType: streetview` gives a
/// session token (reused until it expires); `POST /v1/streetview/panoIds` finds the nearest pano id of up to 100
/// locations a request; `GET /v1/streetview/metadata?panoId=` gives image and tile sizes, heading, tilt, roll,
/// date, copyright and links (the neighbouring panoramas: a point whose nearest panorama is of another date than
/// the previous frame's takes one of the previous frame's run instead when it is near enough, ``sameRunSlack``); `GET
/// /v1/streetview/tiles/{z}/{x}/{y}?panoId=` gives 512 × 512 JPEG tiles. Every request carries `key` and `session` as
/// query parameters. The key never appears in messages or cache paths.
public struct GoogleStreetViewSource: PanoramaSource {
    /// `google`.
    public let name = "google"
    /// Map Tiles API base URL (default `https://tile.googleapis.com`); tests point it at a stand-in.
    public let baseURL: URL
    private let apiKey: String
    private let client: HTTPClient
    private let cache: HTTPCache?
    private let session: SessionStore
    private let progress: ProgressHandler?
    private let runMemory = RunMemory()

    /// How much farther (metres) a panorama of the previous frame's capture run may be than the nearest and still
    /// be chosen (Street View cars take one about every 10 m). Default 5; 0 always takes the nearest.
    public var sameRunSlack = 5.0

    /// The default base URL.
    public static let defaultBaseURL = URL(string: "https://tile.googleapis.com")!

    /// Take panoramas whose metadata's `imageryType` is `indoor` (a shop's or a museum's photosphere) as any other.
    /// Default false: the lookup leaves them out (their points count as without coverage), and ``indoorWarning``
    /// is told of each once.
    public var includeIndoor = false
    /// Told of each indoor panorama left out, once (`includeIndoor` false).
    public var indoorWarning: WarningHandler?
    /// Ids whose metadata says `indoor`, and those warned of.
    private let indoor = IndoorPanoramas()

    /// - Parameters:
    ///   - apiKey: a Google Maps Platform key with the Map Tiles API enabled (the CLI reads `GOOGLE_MAPS_API_KEY`).
    ///   - baseURL: where the API lives.
    ///   - client: the HTTP client; the key is added to its secrets so no message shows it.
    ///   - cache: where tiles and metadata are kept, as their `Cache-Control` and `ETag` allow (Map Tiles API
    ///     policies; see ``HTTPCache``); `nil`: no cache.
    ///   - progress: tile progress (`stage` "tiles").
    /// - Throws: ``LapseError`` `.usage` when the key is empty.
    public init(
        apiKey: String, baseURL: URL = defaultBaseURL, client: HTTPClient? = nil, cache: DiskCache? = nil,
        progress: ProgressHandler? = nil
    ) throws {
        try self.init(
            apiKey: apiKey, baseURL: baseURL, client: client, httpCache: cache.map { HTTPCache(cache: $0) },
            progress: progress)
    }

    /// As ``init(apiKey:baseURL:client:cache:progress:)`` with the HTTP cache given (e.g. with its own clock).
    public init(
        apiKey: String, baseURL: URL = defaultBaseURL, client: HTTPClient? = nil, httpCache: HTTPCache?,
        progress: ProgressHandler? = nil
    ) throws {
        let key = apiKey.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty else { throw LapseError.usage("the Google source needs an API key in GOOGLE_MAPS_API_KEY") }
        self.apiKey = key
        self.baseURL = baseURL
        var configuration = client?.configuration ?? HTTPClient.Configuration()
        if !configuration.secrets.contains(key) { configuration.secrets.append(key) }
        // A client of our own only when the given one does not already hide the key.
        if let client, client.configuration.secrets.contains(key) {
            self.client = client
        } else {
            self.client = HTTPClient(configuration: configuration)
        }
        self.cache = httpCache
        self.progress = progress
        session = SessionStore()
    }

    // MARK: - Lookup

    /// Google's nearest outdoor (unless indoor ones are included) panorama within `radius` metres of each coordinate,
    /// nil where there is none; asked of the Street View metadata endpoint a few at a time.
    /// - Throws: `.network`, `.invalidInput` (the key refused, the quota exceeded, an answer that does not parse).
    public func nearest(to coordinates: [Coordinate], radius: Double) async throws -> [PanoramaMetadata?] {
        var ids: [String?] = []
        for start in stride(from: 0, to: coordinates.count, by: 100) {
            let chunk = Array(coordinates[start..<min(start + 100, coordinates.count)])
            ids += try await panoIds(chunk, radius: radius)
        }
        // Metadata once per unique id, concurrently.
        var known: [String: (PanoramaMetadata, [String])] = [:]
        try await fetch(Set(ids.compactMap { $0 }), into: &known)
        // The same capture run where it is near enough: a panorama of another date than the previous frame's
        // (another car's run, often across the road) gives way to one of the previous frame's run, found among
        // that panorama's links (its neighbours in the run) and the panorama itself, when that is at most
        // `sameRunSlack` metres farther from the point.
        var chosen: [PanoramaMetadata?] = []
        // The previous window's last frame (a route is looked up a window at a time), when it is near this one's
        // first point.
        var previous = runMemory.last.flatMap { last in
            coordinates.first.map { last.coordinate.distance(to: $0) <= radius + sameRunSlack } == true ? last : nil
        }
        if let previous { known[previous.id] = (previous, runMemory.links) }
        let indoorIDs = includeIndoor ? [] : indoor.ids.withLock { $0 }
        for (k, id) in ids.enumerated() {
            guard var pick = id.flatMap({ known[$0]?.0 }) else {
                chosen.append(nil)
                continue
            }
            if indoorIDs.contains(pick.id) {
                if indoor.warned.withLock({ $0.insert(pick.id).inserted }) {
                    indoorWarning?(
                        """
                        Google Street View pano \(pick.id) is indoor imagery: left out, its points counted as \
                        without coverage (--include-indoor takes it)
                        """
                    )
                }
                chosen.append(nil)
                continue
            }
            if let run = previous, sameRunSlack > 0, run.date != nil, pick.date != run.date,
                let links = known[run.id]?.1
            {
                try await fetch(Set(links), into: &known, optional: true)
                // Links met just now may be indoor too.
                let indoorIDs = includeIndoor ? [] : indoor.ids.withLock { $0 }
                let here = coordinates[k]
                let limit = min(radius, pick.coordinate.distance(to: here) + sameRunSlack)
                let same = ([run] + links.compactMap { known[$0]?.0 })
                    .filter { $0.date == run.date && !indoorIDs.contains($0.id) }
                    .map { ($0, $0.coordinate.distance(to: here)) }.filter { $0.1 <= limit }.min { $0.1 < $1.1 }
                if let same { pick = same.0 }
            }
            chosen.append(pick)
            previous = pick
        }
        if let previous { runMemory.remember(previous, links: known[previous.id]?.1 ?? []) }
        return chosen
    }

    /// Metadata and links of every id not yet known, concurrently. With `optional` (a link's neighbours), one
    /// that is gone or unusable is left out instead of failing the lookup.
    private func fetch(
        _ ids: Set<String>, into known: inout [String: (PanoramaMetadata, [String])],
        optional: Bool = false
    ) async throws {
        let missing = ids.filter { known[$0] == nil }
        guard !missing.isEmpty else { return }
        try await withThrowingTaskGroup(of: (PanoramaMetadata, [String])?.self) { group in
            for id in missing {
                group.addTask {
                    do { return try await self.metadataAndLinks(id: id) } catch let e as LapseError
                        where optional
                        && (e.code == .notFound || e.code == .invalidInput || e.reason.hasPrefix("unusable answer"))
                    { return nil }
                }
            }
            for try await m in group { if let m { known[m.0.id] = m } }
        }
    }

    private struct PanoIdsRequest: Encodable {
        struct Location: Encodable {
            var lat: Double
            var lng: Double
        }
        var locations: [Location]
        var radius: Int
    }
    private struct PanoIdsAnswer: Decodable { var panoIds: [String]? }

    /// The number of pano ids in a `panoIds` answer, nil when it is not one (ids longer than ``Limits/panoId``
    /// included).
    private static func panoIdCount(_ body: Data) -> Int? {
        guard let ids = (try? JSONDecoder().decode(PanoIdsAnswer.self, from: body))?.panoIds,
            !ids.contains(where: { $0.count > Limits.panoId })
        else { return nil }
        return ids.count
    }

    private func panoIds(_ coordinates: [Coordinate], radius: Double) async throws -> [String?] {
        let body = PanoIdsRequest(
            locations: coordinates.map { .init(lat: $0.latitude, lng: $0.longitude) },
            radius: max(1, Int(radius.rounded())))
        let (response, url) = try await withSession { token in
            let url = endpoint("v1/streetview/panoIds", token: token)
            let response = try await client.post(
                url, json: try JSONEncoder().encode(body),
                accept: { Self.panoIdCount($0.body) == coordinates.count },
                temporaryRefusal: GoogleAPIError.temporaryRefusal, maxBodyBytes: Limits.answerBytes)
            try check(response, url)
            return (response, url)
        }
        guard let answer = try? JSONDecoder().decode(PanoIdsAnswer.self, from: response.body),
            let ids = answer.panoIds, ids.count == coordinates.count
        else {
            throw LapseError(
                .invalidInput, client.subject(url), "unexpected answer (expected \(coordinates.count) pano ids)")
        }
        return ids.map { $0.isEmpty ? nil : $0 }
    }

    /// What a Map Tiles answer may be, from the API's documentation with room to spare; an answer beyond it is a
    /// fault of the server (`.network`), never used: a tile grid or a picture sized by it would be.
    enum Limits {
        /// Bytes of a metadata, session or `panoIds` answer (a metadata answer is about 2 kB).
        static let answerBytes = 1 << 20
        /// Full-resolution size: Google's panoramas are 16384 × 8192 at zoom 5; user photospheres are smaller.
        static let imageWidth = 1...32768, imageHeight = 1...16384
        /// Tile size: the API serves 512 × 512 tiles.
        static let tileSize = 64...2048
        /// Characters of the copyright line (drawn in every frame) and of a pano id.
        static let copyright = 300, panoId = 256
    }

    /// Map Tiles API metadata of one panorama (field names as the API gives them).
    struct MetadataAnswer: Codable {
        var panoId: String
        var lat: Double
        var lng: Double
        var imageWidth: Int
        var imageHeight: Int
        var tileWidth: Int?
        var tileHeight: Int?
        var heading: Double?
        var tilt: Double?
        var roll: Double?
        var date: String?
        var copyright: String?
        /// `outdoor` or `indoor` (an indoor photosphere: a shop, a museum).
        var imageryType: String?
        /// The panoramas next to this one (its capture run's neighbours, and crossings).
        var links: [Link]?

        struct Link: Codable {
            var panoId: String
            var heading: Double?
            var text: String?
        }

        /// What makes this answer unusable (``Limits``), or nil.
        var problem: String? {
            if !Limits.imageWidth.contains(imageWidth) || !Limits.imageHeight.contains(imageHeight) {
                return "image size \(imageWidth)x\(imageHeight) out of range"
            }
            for size in [tileWidth, tileHeight].compactMap({ $0 }) where !Limits.tileSize.contains(size) {
                return "tile size \(size) out of range"
            }
            if !(-90...90).contains(lat) || !(-180...180).contains(lng) { return "position out of range" }
            if [heading, tilt, roll].contains(where: { $0.map { !$0.isFinite } ?? false }) { return "non-finite angle" }
            if (copyright?.count ?? 0) > Limits.copyright { return "copyright of \(copyright?.count ?? 0) characters" }
            if panoId.isEmpty || panoId.count > Limits.panoId { return "pano id of \(panoId.count) characters" }
            return nil
        }

        /// The answer in `data`, when it decodes.
        static func decoded(_ data: Data) -> MetadataAnswer? {
            try? JSONDecoder().decode(MetadataAnswer.self, from: data)
        }
    }

    /// The metadata of pano `id` (from the cache when present).
    /// - Throws: ``LapseError`` `.notFound` for an unknown id, `.denied` for a bad key, network errors.
    public func metadata(id: String) async throws -> PanoramaMetadata { try await metadataAndLinks(id: id).0 }

    /// The metadata of pano `id` and the pano ids it links to.
    private func metadataAndLinks(id: String) async throws -> (PanoramaMetadata, [String]) {
        let key = CacheKey("google", id, "metadata.json")
        let data = try await withSession { token -> Data in
            let url = endpoint("v1/streetview/metadata", token: token).appending(queryItems: [
                URLQueryItem(name: "panoId", value: id)
            ])
            if let cache {
                return try await cache.get(
                    url, key: key, client: client, validate: { MetadataAnswer.decoded($0) != nil },
                    temporaryRefusal: GoogleAPIError.temporaryRefusal, maxBodyBytes: Limits.answerBytes,
                    check: { try self.check($0, url) }
                ).data
            }
            let response = try await client.get(
                url, accept: { MetadataAnswer.decoded($0.body) != nil },
                temporaryRefusal: GoogleAPIError.temporaryRefusal,
                maxBodyBytes: Limits.answerBytes)
            try check(response, url)
            return response.body
        }
        guard let m = MetadataAnswer.decoded(data) else {
            throw LapseError(.invalidInput, "Google Street View metadata of \(id)", "unexpected answer")
        }
        if let problem = m.problem {
            cache?.remove(key) // a fault of the server: not kept for the next run
            throw LapseError(.network, "Google Street View metadata of \(id)", "unusable answer (\(problem))")
        }
        if m.imageryType?.lowercased() == "indoor" { indoor.ids.withLock { _ = $0.insert(m.panoId) } }
        return (
            PanoramaMetadata(
                source: name, id: m.panoId, coordinate: Coordinate(uncheckedLatitude: m.lat, longitude: m.lng),
                date: m.date, heading: normalizeDegrees(m.heading ?? 0), tilt: (m.tilt ?? 90) - 90, roll: m.roll ?? 0,
                width: m.imageWidth, height: m.imageHeight, tileWidth: m.tileWidth ?? 512,
                tileHeight: m.tileHeight ?? 512,
                copyright: m.copyright, headingSource: m.heading == nil ? "none" : "metadata"),
            (m.links ?? []).map(\.panoId).filter { !$0.isEmpty && $0 != m.panoId }
        )
    }

    // MARK: - Images

    /// The zoom level `resolution` asks for, for this panorama (0 … 5; zoom 5 is the full resolution).
    public static func zoom(for resolution: PanoramaResolution, metadata m: PanoramaMetadata) -> Int {
        switch resolution {
        case .full: return TileGrid.highestZoom
        case .zoom(let z): return min(max(0, z), TileGrid.highestZoom)
        case .atLeast(let w):
            return TileGrid.zoom(forWidth: w, fullWidth: m.width, fullHeight: m.height, tileWidth: m.tileWidth ?? 512)
        }
    }

    /// Stitches the panorama at the zoom `resolution` asks for. When the API answers a tile of that zoom with an
    /// error (`NOT_FOUND`, `INVALID_ARGUMENT`: imagery missing at that zoom) or with all-black placeholder tiles, the
    /// next lower zoom is used, down to zoom 0; ``PanoramaImage/requestedZoom`` records the zoom first asked for and
    /// ``PanoramaImage/placeholderTiles`` the placeholders met.
    /// - Throws: ``LapseError`` `.notFound` when no zoom level has the imagery, network and decoding errors.
    public func image(for panorama: PanoramaMetadata, resolution: PanoramaResolution) async throws -> PanoramaImage {
        try await image(for: panorama, resolution: resolution, region: nil)
    }

    /// The Map Tiles API policies: "for map visualization only"; image analysis and machine interpretation are
    /// uses not allowed.
    public var analysisRestriction: String? {
        "Google's Map Tiles API policies allow no analysis of Street View pictures"
    }

    /// Never made: Street View pictures may not be analysed (``analysisRestriction``).
    /// - Throws: ``LapseError`` `.usage`, always.
    public func analysisImage(for panorama: PanoramaMetadata, width: Int) async throws -> PanoramaImage {
        throw LapseError.usage("\(analysisRestriction ?? ""); pose panoramas from their metadata")
    }

    /// As ``image(for:resolution:)``, fetching only the tiles `region` touches (all when `nil`); the pixels of the
    /// other tiles are unset. Placeholders are looked for among the fetched tiles.
    public func image(
        for panorama: PanoramaMetadata, resolution: PanoramaResolution,
        region: PanoramaRegion?
    ) async throws -> PanoramaImage {
        try await stitched(panorama, resolution: resolution, region: region, yuv: false)
    }

    /// As ``image(for:resolution:region:)``, the tiles stitched as Y′CbCr (their JPEG planes, BT.601 full range
    /// re-expressed as BT.709 limited range), for a renderer that takes it; nil for tiles of odd size.
    public func yuvImage(
        for panorama: PanoramaMetadata, resolution: PanoramaResolution, region: PanoramaRegion?
    ) async throws -> PanoramaImage? {
        guard (panorama.tileWidth ?? 512) % 2 == 0, (panorama.tileHeight ?? 512) % 2 == 0 else { return nil }
        return try await stitched(panorama, resolution: resolution, region: region, yuv: true)
    }

    private func stitched(
        _ panorama: PanoramaMetadata, resolution: PanoramaResolution, region: PanoramaRegion?, yuv: Bool
    ) async throws -> PanoramaImage {
        let requested = Self.zoom(for: resolution, metadata: panorama)
        var zoom = requested
        var placeholders: [TileIndex] = []
        var downloaded = 0
        var fromCache = 0
        var problems: [String] = []
        while true {
            let grid = TileGrid(
                zoom: zoom, fullWidth: panorama.width, fullHeight: panorama.height,
                tileWidth: panorama.tileWidth ?? 512, tileHeight: panorama.tileHeight ?? 512)
            let base = baseURL
            let key = apiKey
            let id = panorama.id
            var tiles = grid.tiles
            if let region {
                let cells = try region.cells(grid.width, grid.height, grid.tileWidth, grid.tileHeight)
                tiles = tiles.filter { cells[$0.y * grid.columns + $0.x] }
            }
            let result: TileFetcher.Result
            do {
                // A session that expires mid-run is renewed once (tiles already fetched come from the cache).
                result = try await withSession { token in
                    let fetcher = TileFetcher(
                        client: client, cache: cache, cachePrefix: ["google", id],
                        url: { tile in
                            base.appendingPathComponent("v1/streetview/tiles/\(tile.zoom)/\(tile.x)/\(tile.y)")
                                .appending(queryItems: [
                                    URLQueryItem(name: "session", value: token),
                                    URLQueryItem(name: "key", value: key),
                                    URLQueryItem(name: "panoId", value: id)
                                ])
                        }, check: { response, url in try checkTile(response, url) }, progress: progress)
                    return try await fetcher.fetch(grid, tiles: tiles, yuv: yuv)
                }
            } catch let error as LapseError where error.code == .notFound && !Self.isSessionProblem(error) {
                // The API has no tile there at this zoom: the panorama at the next lower one.
                problems.append("zoom \(zoom): \(error.reason)")
                guard zoom > 0 else {
                    throw LapseError(
                        .notFound, "Google Street View pano \(id)",
                        "no imagery at any zoom level (" + problems.joined(separator: "; ") + ")")
                }
                zoom -= 1
                continue
            }
            downloaded += result.downloaded
            fromCache += result.fromCache
            if result.placeholders.isEmpty {
                var image = PanoramaImage(
                    metadata: panorama, picture: result.image, zoom: zoom, placeholderTiles: placeholders,
                    tilesDownloaded: downloaded, tilesFromCache: fromCache)
                image.tilesSkipped = grid.tileCount - tiles.count
                image.requestedZoom = requested
                return image
            }
            placeholders += result.placeholders
            let list =
                result.placeholders.prefix(6).map(\.description).joined(separator: ", ")
                + (result.placeholders.count > 6 ? ", …" : "")
            problems.append(
                """
                zoom \(zoom): \(result.placeholders.count) of \(tiles.count) tiles are all-black placeholders \
                (\(list))
                """
            )
            guard zoom > 0 else {
                throw LapseError(
                    .notFound, "Google Street View pano \(id)",
                    "no imagery at any zoom level (" + problems.joined(separator: "; ") + ")")
            }
            zoom -= 1
        }
    }

    /// Removes the tiles and metadata kept only for this job (those whose answers did not allow caching).
    public func jobFinished() { cache?.discardTransient() }

    // MARK: - Session and errors

    /// Whether `error` is the API refusing the session token (not the key).
    static func isSessionProblem(_ error: LapseError) -> Bool {
        let text = error.reason.lowercased()
        return text.contains("session")
            && (text.contains("http 400") || text.contains("http 401") || text.contains("http 403"))
    }

    private struct CreateSession: Encodable {
        var mapType = "streetview"
        var language = "en-US"
        var region = "US"
    }
    private struct SessionAnswer: Decodable {
        var session: String
        var expiry: String?
    }

    private func createSession() async throws -> (String, Date) {
        let url = baseURL.appendingPathComponent("v1/createSession").appending(queryItems: [
            URLQueryItem(name: "key", value: apiKey)
        ])
        let response = try await client.post(
            url, json: try JSONEncoder().encode(CreateSession()),
            accept: { (try? JSONDecoder().decode(SessionAnswer.self, from: $0.body)) != nil },
            temporaryRefusal: GoogleAPIError.temporaryRefusal, maxBodyBytes: Limits.answerBytes)
        try check(response, url)
        guard let answer = try? JSONDecoder().decode(SessionAnswer.self, from: response.body) else {
            throw LapseError(.invalidInput, client.subject(url), "unexpected answer to createSession")
        }
        // `expiry` is seconds since 1970 as a string; without it assume the documented two weeks.
        let expiry =
            answer.expiry.flatMap(Double.init).map { Date(timeIntervalSince1970: $0) }
            ?? Date().addingTimeInterval(13 * 24 * 3600)
        return (answer.session, expiry)
    }

    private func endpoint(_ path: String, token: String) -> URL {
        baseURL.appendingPathComponent(path).appending(queryItems: [
            URLQueryItem(name: "session", value: token), URLQueryItem(name: "key", value: apiKey)
        ])
    }

    /// Runs `request` with the session token; when the API refuses the token (expired or revoked), once more with
    /// a new session.
    private func withSession<T>(_ request: (String) async throws -> T) async throws -> T {
        let token = try await session.token { try await createSession() }
        do {
            return try await request(token)
        } catch let error as LapseError where Self.isSessionProblem(error) {
            await session.invalidate(token)
            return try await request(try await session.token { try await createSession() })
        }
    }

    /// ``check(_:_:)`` for a tile: the API's answer for a tile a panorama does not have at that zoom (404
    /// `NOT_FOUND`, or a 400 `INVALID_ARGUMENT` that is not about the key) is `.notFound` naming the tile, so that the
    /// next lower zoom is tried.
    private func checkTile(_ response: HTTPResponse, _ url: URL) throws {
        guard response.status == 404 || (response.status == 400 && GoogleAPIError(response)?.isKeyOrPermission != true)
        else {
            return try check(response, url)
        }
        let why = Redaction.message(
            GoogleAPIError(response)?.summary ?? "HTTP \(response.status)", hiding: secrets(of: url))
        throw LapseError(
            .notFound, "Google Map Tiles API (\(client.subject(url)))",
            "tile \(url.pathComponents.suffix(3).joined(separator: "/")): \(why)")
    }

    /// What a message about the request to `url` may not show: the key and the request's session token.
    private func secrets(of url: URL) -> [String] { [apiKey] + HTTPClient.querySecrets(url) }

    /// Turns a non-2xx answer into a clear error (the key and session token never shown): a refused key or an API
    /// not enabled is `.denied` and says what to check; a quota or rate refusal (after the client's retries)
    /// `.rateLimited`; `NOT_FOUND` `.notFound`.
    private func check(_ response: HTTPResponse, _ url: URL) throws {
        guard !response.isSuccess else { return }
        let error = GoogleAPIError(response)
        let summary = Redaction.message(
            error?.summary ?? "HTTP \(response.status)", hiding: secrets(of: url))
        let subject = "Google Map Tiles API (\(client.subject(url)))"
        if error?.isQuotaOrRate == true || response.status == 429 {
            let what =
                error?.isDailyLimit == true
                ? "the project's daily Map Tiles quota is used up (it resets at midnight Pacific time)"
                : "the project's Map Tiles quota or rate limit was reached"
            throw LapseError(.rateLimited, subject, "\(summary); \(what) (see the Google Cloud console's quotas page)")
        }
        let keyProblem =
            error?.isKeyOrPermission == true || response.status == 401 || response.status == 403
            || (response.status == 400 && summary.lowercased().contains("key"))
        if keyProblem {
            throw LapseError(
                .denied, subject,
                """
                the API key was refused (\(summary)); check the key and that the Map Tiles API is enabled for its \
                project
                """
            )
        }
        if response.status == 404 || error?.status == "NOT_FOUND" {
            throw LapseError(.notFound, subject, "NOT_FOUND: \(summary)")
        }
        throw LapseError(.network, subject, summary)
    }
}

/// The indoor panoramas met (metadata `imageryType: indoor`) and those warned of.
final class IndoorPanoramas: Sendable {
    let ids = Mutex<Set<String>>([])
    let warned = Mutex<Set<String>>([])
}

/// The Map Tiles API session token, created once and reused until shortly before it expires.
actor SessionStore {
    private var current: (token: String, expiry: Date)?
    private var pending: Task<(String, Date), any Error>?

    /// Forgets `token` (when it is still the current one) so the next call makes a new session.
    func invalidate(_ token: String) {
        if current?.token == token { current = nil }
    }

    func token(create: @escaping @Sendable () async throws -> (String, Date)) async throws -> String {
        if let current, current.expiry.timeIntervalSinceNow > 60 { return current.token }
        if let pending { return try await pending.value.0 }
        let task = Task { try await create() }
        pending = task
        defer { pending = nil }
        let made = try await task.value
        current = (made.0, made.1)
        return made.0
    }
}

/// The last panorama a lookup chose and its links, so the next window of the route keeps its capture run.
private final class RunMemory: Sendable {
    private let stored = Mutex<(PanoramaMetadata, [String])?>(nil)
    var last: PanoramaMetadata? { stored.withLock { $0?.0 } }
    var links: [String] { stored.withLock { $0?.1 ?? [] } }
    func remember(_ m: PanoramaMetadata, links: [String]) { stored.withLock { $0 = (m, links) } }
}
