// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The Mapillary stand-in (Tests/Fixtures/mapillary_standin.py) and what its world holds: the five real GoPro MAX
/// photos of `pano360/geovisio_gopromax_walk` as sequence `seq-walk` (creator `ada_walks`), frames of a real 360°
/// video beside them and beyond as `seq-drive` (creator `bo_drives`), a flat image and a 360° image that is not 2:1.
public enum MapillaryStandIn {
    /// The one token the stand-in takes.
    public static let token = "MLY|4242424242424242|standinstandinstandin0000"
    /// The id of walk photo `n` (1…5).
    public static func walk(_ n: Int) -> String { "400000000000000\(n)" }
    /// The id of drive image `n` (1…8).
    public static func drive(_ n: Int) -> String { "500000000000000\(n)" }
    /// The walk photos' own GPS positions (latitude, longitude) and compass headings (EXIF `GPSImgDirection`).
    public static let walkEXIF: [(latitude: Double, longitude: Double, heading: Double)] = [
        (49.00688961988304, 1.9191854417991367, 349.05820582058203),
        (49.0068986458004, 1.9191896230005276, 11.185587171213454),
        (49.00692625960235, 1.9191963606027425, 1.4737722892261527),
        (49.00695484980094, 1.919199780601944, 350.4399829132849),
        (49.00697341759938, 1.919194019996227, 356.46147540983605)
    ]

    /// Starts the stand-in with `arguments` (`--expired-search-urls`, `--rate-limit N`…), the pictures it makes kept
    /// under the temporary directory (made once).
    public static func server(_ arguments: [String] = []) throws -> LocalServer {
        try LocalServer(
            script: "mapillary_standin.py",
            arguments: [
                "--data", TestData.root.path, "--workdir",
                FileManager.default.temporaryDirectory.appendingPathComponent("lapse-mapillary-standin-v1").path
            ] + arguments)
    }

    /// A route file through the walk photos' positions ('lat,lng' lines) in `folder`.
    public static func walkRoute(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("walk.txt").path
        try walkEXIF.map { String(format: "%.12f,%.12f", $0.latitude, $0.longitude) }.joined(separator: "\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
