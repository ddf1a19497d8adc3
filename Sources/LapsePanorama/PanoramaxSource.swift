// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseNet

/// Panoramax, the open street-level imagery federation, through its STAC API (no key).
///
/// Lookup: `GET {base}/search?bbox=minLon,minLat,maxLon,maxLat&limit=N` around each point (STAC item search),
/// keeping only 360° pictures (`properties["pers:interior_orientation"].field_of_view == 360`) within the radius,
/// nearest first. Heading from `properties["view:azimuth"]`; the image is the `hd` asset; `license` and the
/// producer (`providers` with role `producer`, or `geovisio:producer`) are kept for attribution.
public struct PanoramaxSource: PanoramaSource {
    public let name = "panoramax"
    /// The API root, e.g. `https://api.panoramax.xyz/api` (the public meta-catalogue, the default).
    public let baseURL: URL
    private let client: HTTPClient
    private let cache: DiskCache?

    public static let defaultBaseURL = URL(string: "https://api.panoramax.xyz/api")!

    public init(baseURL: URL = defaultBaseURL, client: HTTPClient = .shared, cache: DiskCache? = nil) {
        self.baseURL = baseURL
        self.client = client
        self.cache = cache
    }

    // MARK: STAC answer

    struct ItemCollection: Decodable { var features: [Item] }
    struct Item: Decodable {
        struct Geometry: Decodable { var coordinates: [Double] }
        struct Asset: Decodable { var href: String }
        struct Provider: Decodable { var name: String; var roles: [String]? }
        struct Orientation: Decodable {
            var field_of_view: Double?
            var sensor_array_dimensions: [Int]?
        }
        struct Properties: Decodable {
            var datetime: String?
            var azimuth: Double?
            var orientation: Orientation?
            var license: String?
            var producer: String?
            enum CodingKeys: String, CodingKey {
                case datetime, license
                case azimuth = "view:azimuth"
                case orientation = "pers:interior_orientation"
                case producer = "geovisio:producer"
            }
        }
        var id: String
        var geometry: Geometry
        var properties: Properties
        var assets: [String: Asset]?
        var providers: [Provider]?
    }

    // MARK: Lookup

    public func nearest(to coordinates: [Coordinate], radius: Double) async throws -> [PanoramaMetadata?] {
        let unique = Array(Set(coordinates))
        var found: [Coordinate: PanoramaMetadata?] = [:]
        try await withThrowingTaskGroup(of: (Coordinate, PanoramaMetadata?).self) { group in
            for c in unique { group.addTask { (c, try await self.nearest(to: c, radius: radius)) } }
            for try await (c, m) in group { found[c] = m }
        }
        return coordinates.map { found[$0] ?? nil }
    }

    private func nearest(to c: Coordinate, radius: Double) async throws -> PanoramaMetadata? {
        let dLat = radius / 111_320
        let dLng = radius / max(1, 111_320 * cos(c.latitude * .pi / 180))
        let bbox = [c.longitude - dLng, c.latitude - dLat, c.longitude + dLng, c.latitude + dLat]
            .map { String(format: "%.7f", $0) }.joined(separator: ",")
        let url = baseURL.appendingPathComponent("search").appending(queryItems: [
            URLQueryItem(name: "bbox", value: bbox), URLQueryItem(name: "limit", value: "100")])
        let answer = try await client.getJSON(url, as: ItemCollection.self)
        var best: (Double, PanoramaMetadata)?
        for item in answer.features {
            guard item.properties.orientation?.field_of_view == 360, item.geometry.coordinates.count >= 2,
                  let here = try? Coordinate(latitude: item.geometry.coordinates[1], longitude: item.geometry.coordinates[0])
            else { continue }
            let d = c.distance(to: here)
            guard d <= radius, best == nil || d < best!.0 else { continue }
            guard let hd = item.assets?["hd"]?.href ?? item.assets?["sd"]?.href else { continue }
            let size = item.properties.orientation?.sensor_array_dimensions
            let author = item.providers?.first(where: { $0.roles?.contains("producer") == true })?.name ?? item.properties.producer
            best = (d, PanoramaMetadata(
                source: name, id: item.id, coordinate: here, date: item.properties.datetime,
                heading: normalizeDegrees(item.properties.azimuth ?? 0),
                width: size?.first ?? 0, height: size.map { $0.count > 1 ? $0[1] : 0 } ?? 0,
                licence: item.properties.license, author: author, imageURL: hd,
                headingSource: item.properties.azimuth == nil ? "none" : "view:azimuth"))
        }
        return best?.1
    }

    // MARK: Images

    public func image(for panorama: PanoramaMetadata, resolution: PanoramaResolution) async throws -> PanoramaImage {
        let (data, downloaded) = try await hdImage(of: panorama)
        let decoded = try decode(data, of: panorama, reduction: 0)
        var metadata = panorama
        metadata.width = decoded.displayWidth
        metadata.height = decoded.displayHeight
        let (w, h) = LocalPhotoSource.size(for: resolution, width: decoded.displayWidth, height: decoded.displayHeight)
        return PanoramaImage(metadata: metadata, pixels: try decoded.pixels(width: w, height: h),
                             tilesDownloaded: downloaded, tilesFromCache: 1 - downloaded)
    }

    /// The HD picture (kept in the cache for the render) decoded at reduced scale.
    public func analysisImage(for panorama: PanoramaMetadata, width: Int) async throws -> PanoramaImage {
        let (data, downloaded) = try await hdImage(of: panorama)
        let full = panorama.width > 0 ? panorama.width : 4 * width
        let decoded = try decode(data, of: panorama, reduction: LocalPhotoSource.reduction(from: full, to: width))
        return PanoramaImage(metadata: panorama, pixels: try decoded.pixels(accurate: false),
                             tilesDownloaded: downloaded, tilesFromCache: 1 - downloaded)
    }

    /// The `hd` asset's bytes, from the cache or downloaded (then cached), and whether it was downloaded (1 or 0).
    private func hdImage(of panorama: PanoramaMetadata) async throws -> (Data, Int) {
        guard let href = panorama.imageURL, let url = URL(string: href, relativeTo: baseURL)?.absoluteURL else {
            throw LapseError(.notFound, "Panoramax picture \(panorama.id)", "no HD image link")
        }
        let key = CacheKey("panoramax", panorama.id, "hd.jpg")
        if let data = cache?.data(for: key, validate: CacheValidation.jpeg) { return (data, 0) }
        let response = try await client.get(url, accept: { CacheValidation.jpeg($0.body) })
        try response.requireSuccess(client.subject(url))
        try? cache?.store(response.body, for: key)
        return (response.body, 1)
    }

    private func decode(_ data: Data, of panorama: PanoramaMetadata, reduction: Int) throws -> DecodedImage {
        let decoded = try DecodedImage(data: [UInt8](data), name: "Panoramax picture \(panorama.id)", reduction: reduction)
        guard decoded.displayWidth == 2 * decoded.displayHeight else {
            throw LapseError(.invalidInput, "Panoramax picture \(panorama.id)",
                             "not equirectangular: \(decoded.displayWidth)×\(decoded.displayHeight) is not 2:1")
        }
        return decoded
    }
}
