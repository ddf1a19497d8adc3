// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia

/// What a photo file says about where and how it was taken: EXIF GPS and date (``ExifTags``), the GPano
/// heading from its XMP packet, and the pixel size from the JPEG frame header (without decoding the image).
public struct PhotoMetadata: Sendable, Equatable {
    /// The photo.
    public var url: URL
    /// EXIF GPSLatitude/GPSLongitude with their N/S, E/W references, or `nil`.
    public var coordinate: Coordinate?
    /// EXIF GPSImgDirection in degrees (true or magnetic north, as recorded), or `nil`.
    public var gpsImageDirection: Double?
    /// XMP `GPano:PoseHeadingDegrees`, or `nil`.
    public var poseHeading: Double?
    /// XMP `GPano:PosePitchDegrees` (degrees above the horizon of the centre column) and `GPano:PoseRollDegrees`
    /// (degrees; as it increases the horizon turns counter-clockwise in the picture), or `nil`.
    public var posePitch: Double?
    /// GPano `PoseRollDegrees`: the camera's roll when the picture was taken (degrees), or `nil`.
    public var poseRoll: Double?
    /// EXIF DateTimeOriginal (or DateTime) as written: `YYYY:MM:DD HH:MM:SS`.
    public var dateTime: String?
    /// XMP `GPano:ProjectionType` as written (`equirectangular` for a 360° photo), or nil.
    public var projectionType: String?
    /// EXIF Make and Model, joined by a space, or nil.
    public var camera: String?
    /// Stored size in pixels (from the JPEG SOF header), or `nil` when not a JPEG.
    public var width: Int?
    /// Stored height in pixels (from the JPEG SOF header), or `nil` when not a JPEG.
    public var height: Int?
    /// Where a cropped 360° photo sits in its full frame, from XMP `GPano:FullPanoWidthPixels`,
    /// `FullPanoHeightPixels`, `CroppedAreaLeftPixels`, `CroppedAreaTopPixels`, `CroppedAreaImageWidthPixels` and
    /// `CroppedAreaImageHeightPixels` (Google's Photo Sphere XMP metadata), when they place a picture that is not
    /// the whole frame (nil for a whole one, or tags missing or inconsistent).
    public var crop: PanoramaCrop?
    /// Where in the file the camera stored a reduced copy of the picture (the first Large Thumbnail of its
    /// Multi-Picture Format index, ``MultiPicture``: 1440 × 720 in a GoPro MAX photo): a byte range, its content
    /// unchecked; nil when there is none, or when the photo is turned by its EXIF orientation (the copy carries
    /// none of its own).
    public var preview: Range<Int>?

    /// Reads the photo at `url`.
    /// - Throws: ``LapseError`` `.invalidInput` when the file cannot be read.
    public init(url: URL) throws {
        self.url = url
        let path = url.filePath
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw LapseError(
                .invalidInput, path,
                FileManager.default.fileExists(atPath: path) ? "file is not readable" : "no such file")
        }
        // Headers (EXIF, XMP, SOF) sit at the start: a JPEG's are read up to its image data, at most 1 MB.
        let head = Self.readHeader(handle)
        try? handle.close()
        (width, height) = Self.jpegSize(head) ?? (nil, nil)
        let xmp = Self.xmpPackets(head)
        poseHeading = Self.xmpValue("GPano:PoseHeadingDegrees", in: xmp)
        posePitch = Self.xmpValue("GPano:PosePitchDegrees", in: xmp)
        poseRoll = Self.xmpValue("GPano:PoseRollDegrees", in: xmp)
        let area = [
            "FullPanoWidthPixels", "FullPanoHeightPixels", "CroppedAreaLeftPixels", "CroppedAreaTopPixels",
            "CroppedAreaImageWidthPixels", "CroppedAreaImageHeightPixels"
        ].map { Self.xmpValue("GPano:" + $0, in: xmp).flatMap { $0.isFinite ? Int($0.rounded()) : nil } }
        projectionType = Self.xmpText("GPano:ProjectionType", in: xmp)
        let values = area.compactMap { $0 }
        if values.count == 6,
            let placed = try? PanoramaCrop(
                fullWidth: values[0], fullHeight: values[1], left: values[2], top: values[3], width: values[4],
                height: values[5]),
            !placed.isWhole
        {
            crop = placed
        }
        let exif = ExifTags(head: head)
        if exif?.orientation ?? .up == .up { preview = MultiPicture.largeThumbnail(in: head) }
        guard let exif else { return }
        if let lat = exif.latitude, let lng = exif.longitude {
            coordinate = try? Coordinate(latitude: lat, longitude: lng)
        }
        gpsImageDirection = exif.gpsImageDirection.map(normalizeDegrees)
        dateTime = exif.dateTime
        let camera = [exif.make, exif.model].compactMap { $0?.trimmingCharacters(in: .whitespaces) }
        self.camera = camera.isEmpty ? nil : camera.joined(separator: " ")
    }

    /// Width and height from the first SOF marker of a JPEG (ITU T.81 B.2.2; ``ImageHeader``), or `nil`.
    static func jpegSize(_ b: [UInt8]) -> (Int, Int)? {
        guard b.starts(with: [0xFF, 0xD8]), let header = ImageHeader.read(data: b) else { return nil }
        return (header.width, header.height)
    }

    /// Whether the photo says it is a 360° picture: XMP `GPano:ProjectionType` `equirectangular`, or EXIF Make and
    /// Model of a camera that takes only 360° photos (GoPro MAX and Fusion, Ricoh Theta, Insta360, Samsung Gear 360,
    /// LG 360 CAM, Labpano Pilot, Kandao QooCam, Xiaomi Mi Sphere, Trisio).
    public var saysSpherical: Bool {
        if projectionType?.lowercased() == "equirectangular" { return true }
        guard let camera = camera?.lowercased() else { return false }
        let models = [
            "gopro max", "gopro fusion", "fusion", "theta", "insta360", "gear 360", "sm-c200", "sm-r210", "lg-r105",
            "360 cam", "pilot era", "pilot one", "qoocam", "mi sphere", "trisio"
        ]
        return models.contains { camera.contains($0) }
    }

    /// A text value of XMP (an attribute `name="…"` or an element `<name>…<`), at most 64 bytes, or nil.
    static func xmpText(_ name: String, in bytes: [UInt8]) -> String? {
        guard let (rest, attribute) = xmpField(name, in: bytes) else { return nil }
        guard attribute else { return String(rest.prefix { $0 != "<" }) }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    /// The start of a file, for its headers: a JPEG's segments up to its image data (start of scan), read 64 kB at a
    /// time as far as the walk of its segments (``JPEGSegments``) reaches; anything else's first `limit` bytes. At
    /// most `limit` bytes either way (a JPEG whose headers are longer is cut there, as any file is).
    static func readHeader(_ handle: FileHandle, limit: Int = 1 << 20) -> [UInt8] {
        var head: [UInt8] = []
        let chunk = 1 << 16
        // Exactly `count` bytes at `offset`, read on a chunk past them as the walk needs them, or nil past the end.
        func bytes(_ offset: Int, _ count: Int) -> [UInt8]? {
            let end = offset + count
            if end > head.count, head.count < limit,
                let more = try? handle.read(upToCount: min(limit, end + chunk) - head.count)
            {
                head.append(contentsOf: more)
            }
            guard offset >= 0, count >= 0, end <= head.count else { return nil }
            return Array(head[offset..<end])
        }
        if case .broken(at: 0) = JPEGSegments.walk(bytes, { _ in true }), head.count < limit,
            let rest = try? handle.read(upToCount: limit - head.count)
        {
            head.append(contentsOf: rest) // not a JPEG: its first `limit` bytes
        }
        return head
    }

    /// The XMP of a JPEG header: the payloads of its APP1 segments that carry XMP (`http://ns.adobe.com/xap/1.0/`,
    /// and extended XMP's `http://ns.adobe.com/xmp/extension/`), joined in the order they come (Adobe, "XMP
    /// Specification Part 3", 1.1.3: JPEG), each as far as `head` holds it. All of `head` when it is not a JPEG or
    /// none of its segments before the image data holds XMP (then XMP is looked for anywhere in it, as in other
    /// formats). The ten lookups a photo then go through a few kilobytes rather than the whole header.
    static func xmpPackets(_ head: [UInt8]) -> [UInt8] {
        let signatures = ["http://ns.adobe.com/xap/1.0/\0", "http://ns.adobe.com/xmp/extension/\0"].map {
            Array($0.utf8)
        }
        var packets: [UInt8] = []
        var found = false
        JPEGSegments.walk(head) { segment in
            guard segment.marker == 0xE1 else { return true }
            let payload = head[
                segment.payload.clamped(to: segment.payload.lowerBound..<max(segment.payload.lowerBound, head.count))]
            for signature in signatures where payload.starts(with: signature) {
                packets.append(contentsOf: payload.dropFirst(signature.count))
                found = true
            }
            return true
        }
        return found ? packets : head
    }

    /// A numeric XMP property written as an attribute (`name="12.5"`) or an element (`<name>12.5</name>`).
    /// Found byte by byte in the XMP packets (``xmpPackets(_:)``, a few kilobytes; as a `String` searched with
    /// Foundation the whole 1 MB header took 25 ms a photo).
    static func xmpValue(_ name: String, in bytes: [UInt8]) -> Double? {
        guard let (rest, attribute) = xmpField(name, in: bytes) else { return nil }
        let value = attribute ? rest.drop { $0 == " " || $0 == "\"" || $0 == "'" } : rest
        let number = value.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" }
        return NumberText.decimal(number)
    }

    /// What follows the first `name` in the XMP (at most 64 bytes after it): past `=` and spaces for an attribute
    /// (`attribute` true, its quote still there), past `>` for an element; nil when `name` is not there or is
    /// followed by neither.
    private static func xmpField(_ name: String, in bytes: [UInt8]) -> (rest: Substring, attribute: Bool)? {
        let pattern = Array(name.utf8)
        guard let first = pattern.first, bytes.count >= pattern.count else { return nil }
        var found: Int?
        bytes.withUnsafeBufferPointer { b in
            var i = 0
            let last = b.count - pattern.count
            while i <= last {
                if b[i] == first, (1..<pattern.count).allSatisfy({ b[i + $0] == pattern[$0] }) {
                    found = i + pattern.count
                    return
                }
                i += 1
            }
        }
        guard let end = found else { return nil }
        let text = String(decoding: bytes[end..<min(bytes.count, end + 64)], as: UTF8.self)
        let rest = text[...].drop { $0 == " " }
        if rest.first == "=" { return (rest.dropFirst().drop { $0 == " " }, true) }
        if rest.first == ">" { return (rest.dropFirst(), false) }
        return nil
    }
}
