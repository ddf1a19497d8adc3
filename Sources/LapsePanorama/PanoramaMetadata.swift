// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseRender

/// What is known about one panorama, whatever its source.
public struct PanoramaMetadata: Sendable, Codable, Equatable, Hashable {
    /// The source's name: `google`, `panoramax`, `mapillary`, `local` or `video`.
    public var source: String
    /// The pano id: Google's panoId, Panoramax's picture id, Mapillary's image id, a file name, or `video@<seconds>`.
    public var id: String
    /// Where it was taken.
    public var coordinate: Coordinate
    /// Capture date as the source gives it (`2023-05`, an ISO 8601 timestamp…), or `nil`.
    public var date: String?
    /// Compass heading, in degrees clockwise from north (0 ..< 360), that the image's centre column faces.
    /// Column x of a W-wide image faces `heading + (x / W − 0.5) · 360°`.
    public var heading: Double
    /// Camera tilt in degrees, 0 = level, positive when the camera's forward axis (the centre column) points above
    /// the horizon (as `PanoramaPose.tilt`): Google's metadata tilt − 90 (it reports level as 90), Panoramax's
    /// `pers:pitch` (GPano `PosePitchDegrees`, "degrees above the horizon"), else 0.
    public var tilt: Double
    /// Camera roll in degrees, 0 = level, positive when the camera is turned clockwise as seen from behind, so that
    /// the horizon turns counter-clockwise in the picture (as `PanoramaPose.roll`): Google's metadata roll,
    /// Panoramax's `pers:roll` (GPano `PoseRollDegrees`: "as roll increases, the horizon rotates counterclockwise
    /// in the image"), else 0.
    public var roll: Double
    /// Full-resolution equirectangular size, in pixels (width = 2 × height for a whole sphere; for a cropped
    /// picture the size of its full frame, ``crop`` telling where the picture sits in it).
    public var width: Int
    /// Full picture height in pixels.
    public var height: Int
    /// Where a cropped 360° picture (one without the nadir or the zenith, e.g. Panoramax's `visible_area`) sits in
    /// its full frame; nil for a picture of the whole sphere. Sources deliver such a picture placed in its full 2:1
    /// frame, the missing part black.
    public var crop: PanoramaCrop?
    /// The capture run the panorama belongs to (Panoramax's collection, Mapillary's sequence: pictures taken in one
    /// go), when the source has one.
    public var collection: String?
    /// Tile size in pixels for tiled sources (Google: 512 × 512), else `nil`.
    public var tileWidth: Int?
    /// Tile height in pixels for tiled sources, else `nil`.
    public var tileHeight: Int?
    /// Copyright line (Google), for attribution.
    public var copyright: String?
    /// Licence (Panoramax: e.g. `CC-BY-SA-4.0`; Mapillary: `CC BY-SA 4.0`), for attribution.
    public var license: String?
    /// Author or owner, for attribution.
    public var author: String?
    /// Where the pixels come from for your own photos and videos (the file, or the video's URL), else `nil`; in JSON
    /// its path as given.
    @LocationText public var file: URL?
    /// Time in seconds in a video, for video sources.
    public var time: Double?
    /// Where the full-resolution image is downloaded from (Panoramax's `hd` asset, Mapillary's
    /// `thumb_original_url`), else `nil`.
    public var imageURL: String?
    /// Where a smaller image is downloaded from (Panoramax's `sd` asset, Mapillary's `thumb_2048_url`: 2048 pixels
    /// wide), else `nil`.
    public var smallImageURL: String?
    /// Where ``heading`` comes from: `metadata` (Google's), `view:azimuth` (Panoramax), `computed_rotation`,
    /// `computed_compass_angle` or `compass_angle` (Mapillary's, refined first), `GPSImgDirection` or
    /// `PoseHeadingDegrees` (a photo's EXIF/XMP), `next photo` or `previous photo` (the bearing between photos),
    /// `none` (a placeholder, 0: the source does not know — a Panoramax picture without `view:azimuth`), or `nil`
    /// (not recorded).
    public var headingSource: String?

    /// Metadata with the given values (see the properties).
    public init(
        source: String, id: String, coordinate: Coordinate, date: String? = nil, heading: Double,
        tilt: Double = 0, roll: Double = 0, width: Int, height: Int, tileWidth: Int? = nil,
        tileHeight: Int? = nil, copyright: String? = nil, license: String? = nil, author: String? = nil,
        file: URL? = nil, time: Double? = nil, imageURL: String? = nil, headingSource: String? = nil,
        crop: PanoramaCrop? = nil, collection: String? = nil, smallImageURL: String? = nil
    ) {
        self.source = source
        self.id = id
        self.coordinate = coordinate
        self.date = date
        self.heading = heading
        self.tilt = tilt
        self.roll = roll
        self.width = width
        self.height = height
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
        self.copyright = copyright
        self.license = license
        self.author = author
        self.file = file
        self.time = time
        self.imageURL = imageURL
        self.headingSource = headingSource
        self.crop = crop
        self.collection = collection
        self.smallImageURL = smallImageURL
    }

    /// JSON keys as the manifests and journals written so far have them (`licence`).
    enum CodingKeys: String, CodingKey {
        case source, id, coordinate, date, heading, tilt, roll, width, height, crop, collection, tileWidth, tileHeight,
            copyright, author, file, time, imageURL, smallImageURL, headingSource
        case license = "licence"
    }
}

/// The resolution wanted of a panorama image.
public enum PanoramaResolution: Sendable, Equatable {
    /// The largest the source has.
    case full
    /// The smallest size at least this wide (pixels) that the source offers; the largest it has when it has none.
    /// Google picks the zoom level from it; local sources scale down to it.
    case atLeast(width: Int)
    /// A given Google zoom level (0…5); other sources treat it as `atLeast(width: 512 · 2^zoom)`.
    case zoom(Int)
}

/// A tile of a tiled panorama: column `x`, row `y` at zoom `zoom`.
public struct TileIndex: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Zoom level, 0 (one tile) to ``TileGrid/highestZoom``.
    public var zoom: Int
    /// Column, 0 at the left (the picture's left edge).
    public var x: Int
    /// Row, 0 at the top.
    public var y: Int
    /// The tile in column `x`, row `y` at `zoom`.
    public init(zoom: Int, x: Int, y: Int) {
        self.zoom = zoom
        self.x = x
        self.y = y
    }
    /// `zoom/x/y`.
    public var description: String { "\(zoom)/\(x)/\(y)" }
}

/// An equirectangular panorama image and how it was made.
public struct PanoramaImage: Sendable {
    /// What the panorama is: its id, position, heading, size.
    public var metadata: PanoramaMetadata
    /// The pixels as the source made them: RGBA (opaque), or Y′CbCr (BT.709 limited range 4:2:0) when asked for
    /// as such (``PanoramaSource/yuvImage(for:resolution:region:)``); width = 2 × height for a whole sphere.
    public var picture: Picture
    /// The pixels as RGBA: as made, or converted from ``picture``'s Y′CbCr (a black picture should swscale fail).
    public var pixels: PixelBuffer {
        get {
            switch picture {
            case .rgba(let p): return p
            case .yuv(let f): return (try? f.rgba()) ?? PixelBuffer(width: f.width, height: f.height)
            }
        }
        set { picture = .rgba(newValue) }
    }
    /// The Y′CbCr pixels, when the picture is Y′CbCr.
    public var yuv: YUVFrame? { if case .yuv(let f) = picture { f } else { nil } }

    /// A panorama's pixels in one of the two forms the renderer takes.
    public enum Picture: Sendable {
        case rgba(PixelBuffer)
        case yuv(YUVFrame)
    }
    /// The Google zoom level used, for tiled sources.
    public var zoom: Int?
    /// The zoom level first asked for, for tiled sources; above ``zoom`` when the API had no imagery there (tile
    /// errors or placeholders) and a lower zoom was used.
    public var requestedZoom: Int?
    /// Whether a lower zoom than asked for was used.
    public var fellBack: Bool { (requestedZoom ?? zoom ?? 0) > (zoom ?? 0) }
    /// All-black placeholder tiles met at higher zoom levels before falling back to ``zoom`` (reported, not used).
    public var placeholderTiles: [TileIndex]
    /// Tiles downloaded for this image (0 when all came from the cache).
    public var tilesDownloaded: Int
    /// Tiles read from the cache.
    public var tilesFromCache: Int
    /// Tiles not fetched because the caller's ``PanoramaRegion`` does not touch them: their pixels are unset
    /// (whatever the memory held). 0 for a whole image.
    public var tilesSkipped: Int = 0
    /// What ``picture`` is: equirectangular, or a GoPro MAX cube-map atlas (see ``PanoramaSource/projection``).
    public var projection: SourceProjection = .equirectangular

    /// The picture as an equirectangular RGBA image: ``pixels`` as they are, or a cube-map atlas unfolded at its
    /// own resolution (``LapseRender/GoProEAC/equirectangularWidth``, scaled as the atlas is).
    /// - Throws: ``LapseCore/LapseError`` `.invalidInput` for an atlas of another shape than its layout's.
    public func equirectangularPixels() throws -> PixelBuffer {
        guard case .goproEAC(let eac) = projection else { return pixels }
        let atlas = pixels
        let width = Int((Double(eac.equirectangularWidth) * Double(atlas.width) / Double(eac.atlasWidth)).rounded())
        return try eac.equirectangular(atlas, width: width)
    }

    /// A panorama as RGBA pixels with its metadata and how it was made (see the properties).
    public init(
        metadata: PanoramaMetadata, pixels: PixelBuffer, zoom: Int? = nil, placeholderTiles: [TileIndex] = [],
        tilesDownloaded: Int = 0, tilesFromCache: Int = 0
    ) {
        self.init(
            metadata: metadata, picture: .rgba(pixels), zoom: zoom, placeholderTiles: placeholderTiles,
            tilesDownloaded: tilesDownloaded, tilesFromCache: tilesFromCache)
    }

    /// A panorama as Y′CbCr planes with its metadata and how it was made (see the properties).
    public init(
        metadata: PanoramaMetadata, picture: Picture, zoom: Int? = nil, placeholderTiles: [TileIndex] = [],
        tilesDownloaded: Int = 0, tilesFromCache: Int = 0
    ) {
        self.metadata = metadata
        self.picture = picture
        self.zoom = zoom
        self.placeholderTiles = placeholderTiles
        self.tilesDownloaded = tilesDownloaded
        self.tilesFromCache = tilesFromCache
    }
}
