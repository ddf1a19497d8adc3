// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The Map Tiles stand-in serving panoramas along the first few hundred metres of the real Toronto–Montreal route
/// (`Tests/Fixtures/maptiles_route_world.py`), with a magenta marker in every panorama at the direction of a
/// target beside the road. For hyperlapse tests.
public final class RouteWorld: Sendable {
    public static let key = "route-world-key-AIzaSy77"
    public let server: LocalServer
    /// The route as `lat,lng` lines (the exact step geometry of the Directions response, cut).
    public let routeFile: String
    /// `[lat, lng]` of the marker's target.
    public let target: (latitude: Double, longitude: Double)
    /// The panoramas in route order.
    public let panoramas: [Panorama]
    /// The copyright line every panorama's metadata gives.
    public let copyright: String

    public struct Panorama: Sendable {
        public var id: String
        public var latitude: Double
        public var longitude: Double
        /// Compass heading of the image's centre column.
        public var heading: Double
        /// Metres along the route.
        public var distance: Double
    }

    /// Starts the stand-in; `arguments` go to the script (e.g. `["--max-zoom", "3"]`).
    public init(arguments: [String] = [], in directory: URL) throws {
        routeFile = directory.appendingPathComponent("toronto-start.txt").path
        server = try LocalServer(
            script: "maptiles_route_world.py",
            arguments: [
                "--key", Self.key, "--data", TestData.path("pano360"),
                "--spec", TestData.path("streetview/googlemaps_openapi_spec"), "--route-out", routeFile
            ] + arguments)
        let world = try Self.getJSON(server.baseURL + "/_world")
        let t = world["target"] as? [Double] ?? []
        target = (t.first ?? 0, t.last ?? 0)
        copyright = world["copyright"] as? String ?? ""
        panoramas = (world["panoramas"] as? [[String: Any]] ?? []).map {
            Panorama(
                id: $0["id"] as? String ?? "", latitude: $0["lat"] as? Double ?? 0,
                longitude: $0["lng"] as? Double ?? 0,
                heading: $0["heading"] as? Double ?? 0, distance: ($0["distance"] as? NSNumber)?.doubleValue ?? 0)
        }
    }

    public var baseURL: String { server.baseURL }

    /// The environment that points `lapse` at this stand-in with a valid key.
    public var environment: [String: String] { ["GOOGLE_MAPS_API_KEY": Self.key, "LAPSE_MAPTILES_URL": server.baseURL] }

    /// Tiles served so far (`"panoId/z/x/y"` → times served, faults excluded); `reset` clears the count afterwards.
    public func tilesServed(reset: Bool = false) throws -> [String: Int] {
        try Self.getJSON(server.baseURL + "/_tiles" + (reset ? "?reset=1" : "")) as? [String: Int] ?? [:]
    }

    /// The stand-in's request counters (`total`, `by_kind`, …).
    public func stats() throws -> [String: Any] { try Self.getJSON(server.baseURL + "/_stats") }

    /// Downloads one tile with curl (a session of its own), independently of lapse.
    public func downloadTile(panoID: String, zoom: Int, x: Int, y: Int, to path: String) throws {
        let session = try Shell.run(
            "curl",
            [
                "-s", "-X", "POST", "-H", "Content-Type: application/json", "-d", #"{"mapType":"streetview"}"#,
                "\(baseURL)/v1/createSession?key=\(Self.key)"
            ])
        let token =
            (try JSONSerialization.jsonObject(with: Data(session.stdout.utf8)) as? [String: Any])?["session"] as? String
            ?? ""
        let r = try Shell.run(
            "curl",
            [
                "-s", "-f", "-o", path,
                "\(baseURL)/v1/streetview/tiles/\(zoom)/\(x)/\(y)?key=\(Self.key)&session=\(token)&panoId=\(panoID)"
            ])
        guard r.status == 0 else {
            throw ReferenceError(message: "tile \(panoID)/\(zoom)/\(x)/\(y): curl exit \(r.status)")
        }
    }

    /// GETs a JSON object (e.g. `/_world`) with curl.
    public static func getJSON(_ url: String) throws -> [String: Any] {
        let r = try Shell.run("curl", ["-s", "-f", url])
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        else {
            throw ReferenceError(message: "GET \(url) failed: \(r.stderr)")
        }
        return object
    }
}
