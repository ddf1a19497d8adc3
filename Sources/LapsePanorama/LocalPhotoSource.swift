// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia

/// A folder of the user's own equirectangular 360° JPEGs with GPS in their EXIF.
///
/// Every `.jpg`/`.jpeg` in the folder (not its subfolders) is read; photos that are not 2:1 or have no GPS
/// position are listed in ``skipped`` with the reason and not used. The heading of each photo's centre column
/// comes from EXIF `GPSImgDirection`, else XMP `GPano:PoseHeadingDegrees` (a value of exactly 0 is treated as
/// missing: cameras such as the GoPro MAX write 0 as a placeholder), else the bearing to the next photo in
/// capture order (the last photo takes the bearing from the one before it). Tilt and roll come from XMP
/// `GPano:PosePitchDegrees` and `GPano:PoseRollDegrees` (what a camera with a level sensor records of a picture it
/// did not level itself), else 0.
public struct LocalPhotoSource: PanoramaSource {
    /// `local`.
    public let name = "local"
    /// The folder.
    public let directory: URL
    /// Usable photos in capture order (EXIF DateTimeOriginal, then file name).
    public let panoramas: [PanoramaMetadata]
    /// Photos not used, with the reason (file name → reason).
    public let skipped: [(file: String, reason: String)]
    /// Where each photo's heading came from, by pano id: `GPSImgDirection`, `PoseHeadingDegrees`,
    /// `next photo`, `previous photo` or `none`.
    public let headingSources: [String: String]
    /// Where each photo that has one keeps the camera's reduced copy of itself (``PhotoMetadata/preview``), by pano
    /// id: what ``analysisImage(for:width:)`` decodes when it is large enough.
    public let previews: [String: Range<Int>]
    /// Pictures the render gave back (``recycle(_:)``), the next photos of their size converted into their planes
    /// (a 5760 × 2880 photo's are 25 MB, mapped anew and zeroed by the kernel otherwise). One at most: a render
    /// gives its picture back about when the next photo is converted (40 photos at 5760 × 2880: as much system time
    /// saved as with two kept, 12–18 MB less at the peak). Let go at ``jobFinished()`` (a job that fails leaves it
    /// to the source's end).
    private let spares = SpareFrames(limit: 1)

    /// Reads the folder's photos' headers (the images are decoded only when asked for).
    /// - Parameters:
    ///   - directory: the folder of photos.
    ///   - equirectangular: take every 2:1 photo as a 360° one though nothing says so (see ``refusal(_:)``).
    /// - Throws: ``LapseError`` `.invalidInput` when the folder cannot be read or holds no usable photo.
    public init(directory: URL, equirectangular: Bool = false) throws {
        self.directory = directory
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: directory.path, isDirectory: &isFolder)
            throw LapseError(
                .invalidInput, directory,
                !exists
                    ? "no such folder"
                    : isFolder.boolValue
                        ? "cannot read the folder"
                        : "a file, not a folder of photos (a 360° video is read as video:FILE)")
        }
        let jpegs = names.filter(Self.isJPEG).sorted()
        var usable: [(PhotoMetadata, String)] = []
        var skipped: [(file: String, reason: String)] = []
        for file in jpegs {
            guard let m = try? PhotoMetadata(url: directory.appendingPathComponent(file, isDirectory: false)) else {
                skipped.append((file, "cannot read the file"))
                continue
            }
            guard let w = m.width, let h = m.height else {
                skipped.append((file, "not a readable JPEG"))
                continue
            }
            if let crop = m.crop {
                // A cropped 360° photo: its size the cropped area's (or a scale of it), both ways.
                guard abs(Double(w) * Double(crop.height) - Double(h) * Double(crop.width)) <= Double(crop.width) else {
                    skipped.append(
                        (
                            file,
                            "its GPano cropped area (\(crop.width)×\(crop.height)) is not the shape of the picture "
                                + "(\(w)×\(h))"
                        ))
                    continue
                }
            } else {
                guard w == 2 * h else {
                    skipped.append(
                        (file, "not equirectangular: \(w)×\(h) is not 2:1 and no GPano tags place it on its sphere"))
                    continue
                }
            }
            guard m.coordinate != nil else {
                skipped.append((file, "no GPS position in EXIF"))
                continue
            }
            if m.crop == nil, !equirectangular, let refusal = Self.refusal(m) {
                skipped.append((file, refusal))
                continue
            }
            usable.append((m, file))
        }
        guard !usable.isEmpty else {
            throw LapseError(.invalidInput, directory, Self.noPhotos(in: directory, names: names, skipped: skipped))
        }
        usable.sort { ($0.0.dateTime ?? "", $0.1) < ($1.0.dateTime ?? "", $1.1) }
        var panoramas: [PanoramaMetadata] = []
        var sources: [String: String] = [:]
        var previews: [String: Range<Int>] = [:]
        for (i, (m, file)) in usable.enumerated() {
            let here = m.coordinate!
            var heading = 0.0
            var from = "none"
            if let d = m.gpsImageDirection {
                heading = d
                from = "GPSImgDirection"
            } else if let p = m.poseHeading, p != 0 {
                heading = normalizeDegrees(p)
                from = "PoseHeadingDegrees"
            } else if let next = usable[(i + 1)...].first(where: { $0.0.coordinate!.distance(to: here) > 0.5 }),
                next.0.coordinate!.distance(to: here) <= Self.tripGap
            {
                heading = here.initialBearing(to: next.0.coordinate!)
                from = "next photo"
            } else if let previous = usable[..<i].last(where: { $0.0.coordinate!.distance(to: here) > 0.5 }),
                previous.0.coordinate!.distance(to: here) <= Self.tripGap
            {
                heading = previous.0.coordinate!.initialBearing(to: here)
                from = "previous photo"
            }
            sources[file] = from
            if m.crop == nil, let preview = m.preview { previews[file] = preview }
            // A cropped photo's size is its full frame's, at the photo's scale.
            let scale = m.crop.map { Double(m.width!) / Double($0.width) } ?? 1
            let fullWidth = m.crop.map { Int((Double($0.fullWidth) * scale).rounded()) & ~1 } ?? m.width!
            panoramas.append(
                PanoramaMetadata(
                    source: "local", id: file, coordinate: here, date: m.dateTime, heading: heading,
                    tilt: m.posePitch ?? 0, roll: m.poseRoll ?? 0, width: fullWidth,
                    height: m.crop == nil ? m.height! : fullWidth / 2, file: URL(fileURLWithPath: m.url.path),
                    headingSource: from,
                    crop: m.crop))
        }
        self.panoramas = panoramas
        self.skipped = skipped
        headingSources = sources
        self.previews = previews
    }

    /// Why a 2:1 photo is not taken as a 360° one, or nil when it is: its XMP or its camera says so
    /// (``PhotoMetadata/saysSpherical``), or, saying nothing, its picture wraps around
    /// (``VideoPanoramaSource/wrapsAround(_:)``) and is not two fisheye circles
    /// (``VideoPanoramaSource/isDualFisheye(_:)``) — looked at 512 wide, decoded at ½, ¼ or ⅛ scale.
    static func refusal(_ m: PhotoMetadata) -> String? {
        if m.saysSpherical { return nil }
        guard let decoded = try? DecodedImage(url: m.url, reduction: reduction(from: m.width ?? 0, to: 512)),
            let pixels = try? decoded.pixels(width: 512, height: 256, accurate: false)
        else { return nil } // what cannot be looked at is not refused here (decoding says why, later)
        if VideoPanoramaSource.isDualFisheye(pixels) {
            return VideoPanoramaSource.dualFisheyeReason + " photo from it first"
        }
        if VideoPanoramaSource.wrapsAround(pixels) { return nil }
        return "not known to be a 360° photo: no GPano ProjectionType, not from a known 360° camera, and its left and "
            + "right edges do not meet; give --equirectangular if it is one"
    }

    /// Photos farther apart than this (metres) are of two trips: neither takes its heading from the other (the
    /// bearing across the gap says nothing of either). Twice the default search radius, where a hyperlapse cuts its
    /// route too.
    public static let tripGap = 100.0

    /// The photo nearest each coordinate within `radius` metres (by its GPS), nil where there is none.
    public func nearest(to coordinates: [Coordinate], radius: Double) async throws -> [PanoramaMetadata?] {
        coordinates.map { c in
            var best: (Double, PanoramaMetadata)?
            for p in panoramas {
                let d = c.distance(to: p.coordinate)
                if d <= radius, best == nil || d < best!.0 { best = (d, p) }
            }
            return best?.1
        }
    }

    /// The photo at the size `resolution` asks for; a cropped one placed in its full 2:1 frame (``PanoramaCrop``),
    /// the rest black.
    public func image(for panorama: PanoramaMetadata, resolution: PanoramaResolution) async throws -> PanoramaImage {
        if let crop = panorama.crop {
            let (w, _) = Self.size(for: resolution, width: panorama.width, height: panorama.height)
            return PanoramaImage(metadata: panorama, pixels: try Self.placed(panorama, crop, frameWidth: w))
        }
        let (decoded, w, h) = try Self.decode(panorama, resolution)
        return PanoramaImage(metadata: panorama, pixels: try decoded.pixels(width: w, height: h))
    }

    /// A cropped photo scaled to its place in a full frame `frameWidth` wide, and placed there.
    static func placed(
        _ panorama: PanoramaMetadata, _ crop: PanoramaCrop, frameWidth: Int, accurate: Bool = true, reduction: Int = 0
    ) throws -> PixelBuffer {
        guard let file = panorama.file else { throw LapseError(.invalidInput, panorama.id, "no file") }
        let r = crop.rectangle(inFrameOfWidth: frameWidth)
        let decoded = try DecodedImage(url: file, reduction: reduction)
        return crop.frame(
            width: frameWidth, placing: try decoded.pixels(width: r.width, height: r.height, accurate: accurate))
    }

    /// As ``image(for:resolution:)``, straight from the JPEG's planes to Y′CbCr (``DecodedImage/yuv(width:height:)``);
    /// nil for a photo that needs the RGBA path (turned by its EXIF orientation, alpha, RGB).
    public func yuvImage(for panorama: PanoramaMetadata, resolution: PanoramaResolution, region: PanoramaRegion?)
        async throws -> PanoramaImage?
    {
        guard panorama.crop == nil else { return nil } // placed in its frame in RGBA
        let (decoded, w, h) = try Self.decode(panorama, resolution)
        return try decoded.yuv(width: w, height: h, spares: spares).map {
            PanoramaImage(metadata: panorama, picture: .yuv($0))
        }
    }

    /// Whether a file name is a JPEG's, as the folder is read (`.jpg` or `.jpeg`, any case).
    static func isJPEG(_ name: String) -> Bool {
        ["jpg", "jpeg"].contains(URL(fileURLWithPath: name).pathExtension.lowercased())
    }

    /// Why a folder gave no photo: no JPEG in it (naming a subfolder that has some: folders are not searched, and a
    /// camera's card keeps its photos in one, `DCIM/100GOPRO`), or what the photos skipped lacked (the reason when
    /// all share it, else the first one's, named).
    static func noPhotos(in directory: URL, names: [String], skipped: [(file: String, reason: String)]) -> String {
        guard let first = skipped.first else {
            let nested = names.sorted().first { name in
                let folder = directory.appendingPathComponent(name, isDirectory: true)
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue,
                    let inside = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
                else { return false }
                return inside.contains(where: isJPEG)
            }
            guard let nested else { return "no JPEG files" }
            return "no JPEG files (subfolders are not searched: \(nested) has some; give local:"
                + directory.appendingPathComponent(nested).path + ")"
        }
        let reasons = Set(skipped.map(\.reason))
        return "no usable 360° photo (\(skipped.count) skipped"
            + (reasons.count == 1 ? ": \(first.reason))" : "; the first, \(first.file): \(first.reason))")
    }

    /// The render is done with a photo's picture: a later photo of its size is converted into its planes.
    public func recycle(_ picture: consuming YUVFrame) { spares.give(picture) }

    /// Lets the pictures kept for later photos go.
    public func jobFinished() { spares.removeAll() }

    /// The photo decoded for `resolution`, and the size it is delivered at. A JPEG much larger than the view needs
    /// is decoded at ½, ¼ or ⅛ size; the size delivered is the full one's.
    private static func decode(_ panorama: PanoramaMetadata, _ resolution: PanoramaResolution) throws
        -> (DecodedImage, Int, Int)
    {
        guard let file = panorama.file else { throw LapseError(.invalidInput, panorama.id, "no file") }
        var full: (Int, Int)?
        let decoded = try DecodedImage(url: file) { w, h in
            full = (w, h)
            let (tw, th) = Self.size(for: resolution, width: w, height: h)
            return (width: tw, height: th)
        }
        let (dw, dh) = full ?? (decoded.fullDisplayWidth, decoded.fullDisplayHeight)
        let (w, h) = Self.size(for: resolution, width: dw, height: dh)
        return (decoded, w, h)
    }

    /// The camera's reduced copy of the photo (``previews``) when it serves (a 2:1 JPEG at least `width` wide and
    /// narrower than the photo, right after it: ``previewPixels(_:width:)``; decoded at ½, ¼ or ⅛ scale as the
    /// photo would be), else the photo decoded at ½, ¼ or ⅛ scale (JPEG `lowres`), the smallest still `width` wide;
    /// either, when 2:1 and wider than `width`, scaled to `width` wide as it is turned into RGBA
    /// (``analysisPixels(_:width:)``).
    /// A copy that cannot be read or decoded is passed over for the photo. The copy is taken to show what the photo
    /// shows: the camera made it, and an editor that changes a photo's pixels writes a new file without it (one that
    /// only edits metadata, as exiftool does, keeps both as they were); an index left pointing into a rewritten file
    /// finds no copy right after the photo's end.
    public func analysisImage(for panorama: PanoramaMetadata, width: Int) async throws -> PanoramaImage {
        if panorama.crop == nil, let pixels = previewPixels(panorama, width: width) {
            return PanoramaImage(metadata: panorama, pixels: pixels)
        }
        if let crop = panorama.crop {
            let stored = Int((Double(panorama.width) * Double(crop.width) / Double(crop.fullWidth)).rounded())
            let needed = max(1, Int((Double(width) * Double(crop.width) / Double(crop.fullWidth)).rounded(.up)))
            let pixels = try Self.placed(
                panorama, crop, frameWidth: width, accurate: false,
                reduction: Self.reduction(from: stored, to: needed))
            return PanoramaImage(metadata: panorama, pixels: pixels)
        }
        guard let file = panorama.file else { throw LapseError(.invalidInput, panorama.id, "no file") }
        let decoded = try DecodedImage(
            url: file, reduction: Self.reduction(from: panorama.width, to: width))
        return PanoramaImage(metadata: panorama, pixels: try Self.analysisPixels(decoded, width: width))
    }

    /// The photo's reduced copy (``previews``) as RGBA at the reduction that keeps it `width` wide, or nil when it
    /// has none that serves: read and checked here, as the index that placed it is outside data — at most 16 MB, right
    /// after the photo's own end of image (`FF D9`: where a camera appends it; an index left pointing into a file
    /// rewritten since finds something else there), a JPEG at least `width` and less than the photo wide, upright
    /// (no EXIF orientation of its own) and 2:1 as decoded.
    private func previewPixels(_ panorama: PanoramaMetadata, width: Int) -> PixelBuffer? {
        guard let range = previews[panorama.id], range.lowerBound >= 4, range.count <= 16 << 20,
            let file = panorama.file, let handle = FileHandle(forReadingAtPath: file.filePath)
        else { return nil }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(range.lowerBound - 2))) != nil,
            let data = try? handle.read(upToCount: range.count + 2), data.count == range.count + 2,
            data.starts(with: [0xFF, 0xD9])
        else { return nil }
        let bytes = [UInt8](data.dropFirst(2))
        guard let header = ImageHeader.read(data: bytes), header.reducible, header.width >= width,
            header.width < panorama.width,
            let decoded = try? DecodedImage(
                data: bytes, name: "\(file.filePath) (its reduced copy)",
                reduction: Self.reduction(from: header.width, to: width)),
            decoded.orientation == .up, decoded.displayWidth == 2 * decoded.displayHeight
        else { return nil }
        return try? Self.analysisPixels(decoded, width: width)
    }

    /// A decoded picture as the analysis takes it: a 2:1 picture (to within a pixel: JPEG's reduced decodes round
    /// up, so a 4100 × 2050 photo at ¼ is 1025 × 513) wider than `width` scaled to `width × width/2` in the pass
    /// that turns it into RGBA (one swscale pass, area averaging; converting at the decoded size and scaling RGBA
    /// to RGBA after costs ten times as much), any other at its decoded size.
    static func analysisPixels(_ decoded: DecodedImage, width: Int) throws -> PixelBuffer {
        guard decoded.displayWidth > width, abs(decoded.displayWidth - 2 * decoded.displayHeight) <= 1, width % 2 == 0
        else {
            return try decoded.pixels(accurate: false)
        }
        return try decoded.pixels(width: width, height: width / 2, accurate: false)
    }

    /// The largest JPEG `lowres` reduction (0…3) that keeps an image `full` pixels wide at least `width` wide.
    static func reduction(from full: Int, to width: Int) -> Int {
        var k = 0
        while k < 3, full >> (k + 1) >= width { k += 1 }
        return k
    }

    /// The size a local image is delivered at: its own, or smaller when `resolution` asks for less.
    static func size(for resolution: PanoramaResolution, width: Int, height: Int) -> (Int, Int) {
        let wanted: Int
        switch resolution {
        case .full: return (width, height)
        case .atLeast(let w): wanted = w
        case .zoom(let z): wanted = 512 << max(0, min(z, 6))
        }
        guard wanted < width else { return (width, height) }
        let w = max(2, wanted & ~1)
        return (w, max(1, Int((Double(height) * Double(w) / Double(width)).rounded())))
    }
}
