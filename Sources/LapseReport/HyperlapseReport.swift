// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// What a hyperlapse (or a preview of one) found along its route, for its report page (``ReportPage``): every
/// point looked up and what it had, the panoramas chosen, and every frame's camera.
///
/// Recorded by the job as it runs (``HyperlapseJob/recordsReport``) or by a preview (``PreviewJob``); a few dozen
/// bytes a point. Written into the page as JSON (the keys below, snake_case).
public struct HyperlapseReport: Sendable, Codable, Equatable {
    /// What a point of the route had.
    public enum PointStatus: String, Sendable, Codable, CaseIterable {
        /// A panorama within the search radius, used for a frame.
        case panorama
        /// No panorama within the search radius.
        case uncovered
        /// The same panorama as the point before (or one just behind it in its capture order): no new frame.
        case duplicate
        /// Its panorama's camera had not moved since the frame before: dropped by the stabiliser.
        case stationary
        /// Its panorama was found but its image could not be had (gone, not decodable): its frame is left out.
        case unavailable
    }

    /// A point looked up: a route point (or a video frame, without positions).
    public struct Point: Sendable, Codable, Equatable {
        /// Its index among the feed's points, from 0.
        public var index: Int
        /// WGS84 degrees; meaningless when ``HyperlapseReport/positionsKnown`` is false.
        public var latitude: Double
        /// WGS84 degrees; meaningless when ``HyperlapseReport/positionsKnown`` is false.
        public var longitude: Double
        /// What the point gave: a panorama, a duplicate, a gap, a stationary or unavailable one.
        public var status: PointStatus
        /// The panorama found for it (also for duplicates, stationary and unavailable points).
        public var pano: String?
        /// True for the first point after a jump (your photos of two trips: no route between them): the map draws
        /// no line to it. Absent otherwise.
        public var afterJump: Bool?

        /// A point with the given values (see the properties).
        public init(
            index: Int, latitude: Double, longitude: Double, status: PointStatus, pano: String? = nil,
            afterJump: Bool? = nil
        ) {
            self.index = index
            self.latitude = latitude
            self.longitude = longitude
            self.status = status
            self.pano = pano
            self.afterJump = afterJump
        }

        enum CodingKeys: String, CodingKey {
            case index, latitude, longitude, status, pano
            case afterJump = "after_jump"
        }
    }

    /// A panorama chosen for a point (once, at the first point that found it).
    public struct Panorama: Sendable, Codable, Equatable {
        /// The pano id.
        public var id: String
        /// Where it was taken, WGS84 degrees.
        public var latitude: Double
        /// WGS84 degrees.
        public var longitude: Double
        /// Its capture date as the source gives it ("2024-05", an EXIF time), if any.
        public var date: String?
        /// Metres from the route point it was found for to where it was taken.
        public var distance: Double
        /// The route point it was found for.
        public var point: Int
        /// The video frame rendered from it (0-based, in the output's frame order), nil when none was (a
        /// preview, a duplicate dropped, a frame left out).
        public var frame: Int?
        /// Its credit line ("Google Maps · © 2024 Google"), if it needs one.
        public var credit: String?

        /// A panorama with the given values (see the properties).
        public init(
            id: String, latitude: Double, longitude: Double, date: String?, distance: Double, point: Int,
            frame: Int? = nil, credit: String? = nil
        ) {
            self.id = id
            self.latitude = latitude
            self.longitude = longitude
            self.date = date
            self.distance = distance
            self.point = point
            self.frame = frame
            self.credit = credit
        }
    }

    /// A frame of the video as rendered.
    public struct Frame: Sendable, Codable, Equatable {
        /// Its index in the video (0-based; with a crossfade the blended frames between are not listed).
        public var index: Int
        /// Its presentation time, seconds from the start.
        public var time: Double
        /// The pano id of the panorama the frame was rendered from.
        public var pano: String
        /// The route point it stands for.
        public var point: Int
        /// The camera: compass heading, pitch (up positive) and horizontal field of view, degrees.
        public var heading: Double
        /// Degrees up from the horizon (negative: down).
        public var pitch: Double
        /// Horizontal field of view, degrees.
        public var fov: Double
        /// The compass heading of the panorama's centre column as its source gave it, and as the stabiliser
        /// posed it (equal when stabilisation is off).
        public var sourcePanoHeading: Double
        /// Compass heading of the panorama's centre column as rendered (after stabilisation), degrees.
        public var panoHeading: Double

        /// A frame with the given values (see the properties).
        public init(
            index: Int, time: Double, pano: String, point: Int, heading: Double, pitch: Double, fov: Double,
            sourcePanoHeading: Double, panoHeading: Double
        ) {
            self.index = index
            self.time = time
            self.pano = pano
            self.point = point
            self.heading = heading
            self.pitch = pitch
            self.fov = fov
            self.sourcePanoHeading = sourcePanoHeading
            self.panoHeading = panoHeading
        }
    }

    /// Whether the points have real positions (false for a video without a track: the page then has no map).
    public var positionsKnown: Bool
    /// What a point is, plural ("route points", "video frames").
    public var pointUnit: String
    /// Every point of the route, in order.
    public var points: [Point] = []
    /// Every panorama chosen, in order of first use.
    public var panoramas: [Panorama] = []
    /// Every frame written, in order.
    public var frames: [Frame] = []
    /// What the map draws under the route (default OpenStreetMap's tiles).
    public var basemap: Basemap = .openStreetMap
    /// The route's credit, shown on the map (e.g. "Route: Google Maps"), if any.
    public var routeCredit: String?

    /// What the page draws under the route and markers.
    public enum Basemap: String, Sendable, Codable, Equatable {
        /// OpenStreetMap's raster tiles, with their attribution (fetched by the browser when it is online).
        case openStreetMap = "openstreetmap"
        /// No map: the route, markers and scale bar on a plain background. For a route from Google Maps Platform:
        /// its Routes API policies let its results be shown on a Google map or without a map, and a Google map
        /// (Map Tiles API 2D tiles) would need the user's API key written into the page.
        case none
    }

    /// An empty report; `positionsKnown` false for a video without a track.
    public init(positionsKnown: Bool, pointUnit: String) {
        self.positionsKnown = positionsKnown
        self.pointUnit = pointUnit
    }

    /// How many points have each status.
    public var counts: [PointStatus: Int] {
        var c: [PointStatus: Int] = [:]
        for p in points { c[p.status, default: 0] += 1 }
        return c
    }

    /// Sets the status of point `index` (recorded earlier), if there is one.
    public mutating func mark(point index: Int, _ status: PointStatus) {
        guard let k = Self.position(of: index, in: points) else { return }
        points[k].status = status
    }

    /// Where point `index` is in `points` (which are in increasing index order).
    static func position(of index: Int, in points: [Point]) -> Int? {
        var lo = 0
        var hi = points.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if points[mid].index < index { lo = mid + 1 } else { hi = mid }
        }
        return lo < points.count && points[lo].index == index ? lo : nil
    }

    enum CodingKeys: String, CodingKey {
        case positionsKnown = "positions_known"
        case pointUnit = "point_unit"
        case points, panoramas, frames, basemap
        case routeCredit = "route_credit"
    }
}

extension HyperlapseReport.Frame {
    enum CodingKeys: String, CodingKey {
        case index, time, pano, point, heading, pitch, fov
        case sourcePanoHeading = "source_pano_heading"
        case panoHeading = "pano_heading"
    }
}
