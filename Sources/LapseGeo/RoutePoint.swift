// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// One point of a resampled route: where the camera stands and which way the road goes.
public struct RoutePoint: Hashable, Sendable, Codable {
    /// Where the point lies (degrees).
    public var coordinate: Coordinate
    /// Metres from the start of the route, measured along the path.
    public var distanceAlongRoute: Double
    /// Direction of travel, degrees clockwise from true north, 0 ≤ heading < 360 (smoothed; see
    /// ``Route/resampled(every:smoothing:)``).
    public var heading: Double
    /// Metres above sea level, interpolated between source points that both have one.
    public var elevation: Double?
    /// Interpolated between source points that both have a time.
    public var time: Date?

    /// A point at `coordinate` with its heading, distance along the route and time where known (see the properties).
    public init(
        coordinate: Coordinate, distanceAlongRoute: Double, heading: Double,
        elevation: Double? = nil, time: Date? = nil
    ) {
        self.coordinate = coordinate
        self.distanceAlongRoute = distanceAlongRoute
        self.heading = heading
        self.elevation = elevation
        self.time = time
    }
}
