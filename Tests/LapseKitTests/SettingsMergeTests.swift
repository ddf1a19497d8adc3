// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import Testing

/// A job file and the command line's flags merge field by field (``HyperlapseSettings/overridden(by:)``), for every
/// key a job file can hold (walked from the JSON keys, so a setting added to the file format and not to the merge
/// fails here): a flag given wins over the file's value, a flag not given leaves it, and nothing traps.
@Suite struct SettingsMergeTests {
    /// Two valid values of every key: the job file's and the flag's.
    nonisolated(unsafe) static let values: [String: (file: Any, flag: Any)] = [
        "from": ("1,2", "3,4"), "to": ("5,6", "7,8"), "via": (["1,1"], ["2,2", "3,3"]),
        "provider": ("google", "osrm"), "route": ("a.gpx", "b.gpx"), "source": ("google", "video:x.mp4"),
        "track": ("a.gpx", "b.gpx"), "spacing": (10.0, 2.5), "size": ("1280x720", "640x360"), "fov": (90.0, 70.0),
        "fps": ("12", "30000/1001"), "lookAt": ("1,2", "3,4"), "headingOffset": (10.0, -20.0),
        "keyframes": ("a.json", "b.json"), "zoom": ("auto", 3), "crossfade": (false, true),
        "output": ("a.mp4", "b.mp4"),
        "gif": ("x.gif", "y.gif"), "gifWidth": (480, 320), "cacheDir": ("/c1", "/c2"), "sharedCache": (false, true),
        "radius": (50.0, 20.0), "crf": (20.0, 18.0), "preset": ("medium", "slow"), "panoHeading": (0.0, 90.0),
        "frameStep": (1, 5), "keyFile": ("k1", "k2"), "osrmURL": ("http://a", "http://b"), "timeout": (30.0, 5.0),
        "stabilize": (true, false), "forward": (0.0, -90.0), "toneMatch": (true, false),
        "creditPosition": ("bottom-right", "top-left"), "copyright": ("© A", "© B"), "includeIndoor": (false, true),
        "equirectangular": (false, true),
        "frames": (
            [
                [
                    "pano": "a", "heading": 1.0, "tilt": 0.0, "roll": 0.0, "sourceHeading": 1.0, "from": "start",
                    "travel": 1.0, "view": 1.0
                ]
            ],
            [
                [
                    "pano": "b", "heading": 2.0, "tilt": 0.0, "roll": 0.0, "sourceHeading": 2.0, "from": "pixels",
                    "travel": 2.0, "view": 2.0
                ]
            ]
        ),
        "report": ("a.html", "b.html")
    ]

    static func settings(_ object: [String: Any]) throws -> HyperlapseSettings {
        try JSONDecoder().decode(HyperlapseSettings.self, from: JSONSerialization.data(withJSONObject: object))
    }
    static func object(_ settings: HyperlapseSettings) throws -> NSDictionary {
        try JSONSerialization.jsonObject(with: settings.jsonData()) as! NSDictionary
    }

    @Test func everyKeyMergesFieldByField() throws {
        let keys = try Self.object(
            HyperlapseSettings.defaults.overridden(by: Self.settings(Self.values.mapValues(\.file)))
        )
        .allKeys.compactMap { $0 as? String }
        #expect(Set(keys) == Set(Self.values.keys), "keys not merged: \(Set(Self.values.keys).subtracting(keys))")
        let file = try Self.settings(Self.values.mapValues(\.file))
        let fileObject = try Self.object(file)
        // No flags: the file as it is.
        #expect(try Self.object(file.overridden(by: HyperlapseSettings())) == fileObject)
        for (key, value) in Self.values {
            let flag = try Self.settings([key: value.flag])
            let merged = try Self.object(file.overridden(by: flag)) as! [String: Any]
            var expected = fileObject as! [String: Any]
            expected[key] = try (Self.object(flag) as! [String: Any])[key]
            #expect(NSDictionary(dictionary: merged) == NSDictionary(dictionary: expected), "\(key)")
        }
    }
}
