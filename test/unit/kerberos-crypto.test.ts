// Kerberos cryptosystems against published vectors: RFC 3961 appendix A.1 (n-fold), RFC 3962
// appendix B (PBKDF2 string-to-key and AES-CTS), RFC 8009 appendix A (string-to-key, Kc/Ke/Ki, sample
// encryptions, checksums), MIT krb5's known-answer tests for the RFC 3962 enctypes (derived keys,
// decryptions, checksums), then round trips, tampering and refused enctypes.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { hex, unhex } from "../support/bytes.ts";
import { aesCtsDecrypt, aesCtsEncrypt, enctype, enctypeForChecksum, MAX_S2K_ITERATIONS, nfold, SUPPORTED_ENCTYPES } from "../../src/kerberos/crypto.ts";
import { KrbCryptoError, KrbCryptoErrorReason } from "../../src/kerberos/errors.ts";

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const h = (s: string): string => s.replace(/\s+/g, "").toLowerCase();

function cryptoFailure(fn: () => unknown, reason: string): KrbCryptoError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof KrbCryptoError, `expected KrbCryptoError, got ${String(caught)}`);
  assert.equal(caught.reason, reason, caught.message);
  return caught;
}

describe("RFC 3961 A.1: n-fold", () => {
  const vectors: Array<[string, number, string]> = [
    ["012345", 64, "be072631276b1955"],
    ["password", 56, "78a07b6caf85fa"],
    ["Rough Consensus, and Running Code", 64, "bb6ed30870b7f0e0"],
    ["password", 168, "59e4a8ca7c0385c3c37b3f6d2000247cb6e6bd5b3e"],
    ["MASSACHVSETTS INSTITVTE OF TECHNOLOGY", 192, "db3b0d8f0b061e603282b308a50841229ad798fab9540c1b"],
    ["Q", 168, "518a54a215a8452a518a54a215a8452a518a54a215"],
    ["ba", 168, "fb25d531ae8974499f52fd92ea9857c4ba24cf297e"],
    ["kerberos", 64, "6b65726265726f73"],
    ["kerberos", 128, "6b65726265726f737b9b5b2b93132b93"],
    ["kerberos", 168, "8372c236344e5f1550cd0747e15d62ca7a5a3bcea4"],
    ["kerberos", 256, "6b65726265726f737b9b5b2b93132b935c9bdcdad95c9899c4cae4dee6d6cae4"],
    // MIT t_nfold.c 192-fold vectors
    ["basch", 192, "1aab6b42964b98b21f8cde2d2448ba3455d7862c9731643f"],
    ["eichin", 192, "65696368696e4b732b4b1b43da1a5b995a58d2c6d0d2dcca"],
    ["sommerfeld", 192, "2f7a98557c6ee4abadf4e71192dd442bd4ff5325a5def75c"],
  ];
  for (const [input, bits, want] of vectors) {
    it(`${bits}-fold("${input}")`, () => assert.equal(hex(nfold(utf8(input), bits / 8)), want));
  }
  it("refuses an empty input with a typed error", () => {
    cryptoFailure(() => nfold(new Uint8Array(0), 16), KrbCryptoErrorReason.BadInput);
  });
});

describe("RFC 3962 B: string-to-key (PBKDF2-HMAC-SHA1, DK)", () => {
  const X64 = "X".repeat(64);
  const X65 = "X".repeat(65);
  const GCLEF = "\u{1D11E}"; // g-clef, UTF-8 f0 9d 84 9e
  const salt1234 = unhex("1234567878563412");
  // [password, salt, iterations, aes128 key, aes256 key]
  const vectors: Array<[string, string | Uint8Array, number, string, string]> = [
    ["password", "ATHENA.MIT.EDUraeburn", 1, "42263c6e89f4fc28b8df68ee09799f15", "fe697b52bc0d3ce14432ba036a92e65bbb52280990a2fa27883998d72af30161"],
    ["password", "ATHENA.MIT.EDUraeburn", 2, "c651bf29e2300ac27fa469d693bdda13", "a2e16d16b36069c135d5e9d2e25f896102685618b95914b467c67622225824ff"],
    ["password", "ATHENA.MIT.EDUraeburn", 1200, "4c01cd46d632d01e6dbe230a01ed642a", "55a6ac740ad17b4846941051e1e8b0a7548d93b0ab30a8bc3ff16280382b8c2a"],
    ["password", salt1234, 5, "e9b23d52273747dd5c35cb55be619d8e", "97a4e786be20d81a382d5ebc96d5909cabcdadc87ca48f574504159f16c36e31"],
    [X64, "pass phrase equals block size", 1200, "59d1bb789a828b1aa54ef9c2883f69ed", "89adee3608db8bc71f1bfbfe459486b05618b70cbae22092534e56c553ba4b34"],
    [X65, "pass phrase exceeds block size", 1200, "cb8005dc5f90179a7f02104c0018751d", "d78c5c9cb872a8c9dad4697f0bb5b2d21496c82beb2caeda2112fceea057401b"],
    [GCLEF, "EXAMPLE.COMpianist", 50, "f149c1f2e154a73452d43e7fe62a56e5", "4b6d9839f84406df1f09cc166db4b83c571848b784a3d6bdc346589a3e393f9e"],
  ];
  for (const [password, salt, iterations, k128, k256] of vectors) {
    const label = `"${password.length > 12 ? `${password.slice(0, 4)}…(${password.length})` : password}", ${iterations} iteration(s)`;
    it(`aes128: ${label}`, () => {
      const params = Uint8Array.of(iterations >>> 24, (iterations >>> 16) & 0xff, (iterations >>> 8) & 0xff, iterations & 0xff);
      assert.equal(hex(enctype(17).stringToKey(password, salt, params)), k128);
    });
    it(`aes256: ${label}`, () => assert.equal(hex(enctype(18).stringToKey(password, salt, iterations)), k256));
  }
  it("uses 4096 iterations without s2kparams", () => {
    assert.equal(enctype(17).defaultIterations, 4096);
    assert.deepEqual(enctype(18).stringToKey("password", "ATHENA.MIT.EDUraeburn"), enctype(18).stringToKey("password", "ATHENA.MIT.EDUraeburn", unhex("00001000")));
  });
  it("refuses malformed s2kparams and absurd iteration counts", () => {
    cryptoFailure(() => enctype(17).stringToKey("p", "s", unhex("0001")), KrbCryptoErrorReason.BadInput);
    cryptoFailure(() => enctype(17).stringToKey("p", "s", unhex("00000000")), KrbCryptoErrorReason.BadInput);
    const e = cryptoFailure(() => enctype(18).stringToKey("p", "s", unhex("ffffffff")), KrbCryptoErrorReason.BadInput);
    assert.match(e.message, /iteration count 4294967295/);
  });
  it("refuses 2^24 iterations (MIT krb5's ceiling) before running PBKDF2", () => {
    assert.equal(MAX_S2K_ITERATIONS, 2 ** 24 - 1);
    for (const id of [17, 18, 19, 20]) {
      const e = cryptoFailure(() => enctype(id).stringToKey("p", "s", unhex("01000000")), KrbCryptoErrorReason.BadInput);
      assert.match(e.message, /string-to-key iteration count 16777216 .* is outside 1\.\.16777215 \(MIT krb5's ceiling\)/);
    }
  });
});

describe("RFC 3962 B: AES-CTS (key \"chicken teriyaki\", zero IV)", () => {
  const key = utf8("chicken teriyaki");
  const input = utf8("I would like the General Gau's Chicken, please, and wonton soup.");
  const iv = new Uint8Array(16);
  const vectors: Array<[number, string]> = [
    [17, "c6353568f2bf8cb4d8a580362da7ff7f97"],
    [31, "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5"],
    [32, "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584"],
    [47, "97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e39312523a78662d5be7fcbcc98ebf5"],
    [48, "97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd839312523a78662d5be7fcbcc98ebf5a8"],
    [64, "97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a84807efe836ee89a526730dbc2f7bc8409dad8bbb96c4cdc03bc103e1a194bbd8"],
  ];
  for (const [n, want] of vectors) {
    it(`${n} bytes: encrypts to the RFC output and decrypts back`, () => {
      const out = aesCtsEncrypt(key, iv, input.subarray(0, n));
      assert.equal(hex(out), want);
      assert.deepEqual(aesCtsDecrypt(key, iv, out), input.slice(0, n));
    });
  }
  it("round-trips every length from 16 to 80 bytes", () => {
    for (let n = 16; n <= 80; n++) {
      const p = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
      assert.deepEqual(aesCtsDecrypt(key, iv, aesCtsEncrypt(key, iv, p)), p, `length ${n}`);
    }
  });
  it("refuses less than one block", () => {
    cryptoFailure(() => aesCtsEncrypt(key, iv, new Uint8Array(15)), KrbCryptoErrorReason.BadInput);
    cryptoFailure(() => aesCtsDecrypt(key, iv, new Uint8Array(3)), KrbCryptoErrorReason.BadInput);
  });
});

describe("RFC 3961/3962: derived keys (MIT t_derive.c, usage 2)", () => {
  const base128 = unhex("42263C6E89F4FC28B8DF68EE09799F15");
  const base256 = unhex("FE697B52BC0D3CE14432BA036A92E65BBB52280990A2FA27883998D72AF30161");
  const vectors: Array<[number, Uint8Array, "Kc" | "Ke" | "Ki", string]> = [
    [17, base128, "Kc", "34280a382bc92769b2da2f9ef066854b"],
    [17, base128, "Ke", "5b14fc4e250e14ddf9dccf1af6674f53"],
    [17, base128, "Ki", "4ed31063621684f09ae8d89991af3e8f"],
    [18, base256, "Kc", "bfab388bdcb238e9f9c98d6a878304f04d30c82556375ac507a7a852790f4674"],
    [18, base256, "Ke", "c7cfd9cd75fe793a586a542d87e0d1396f1134a104bb1a9190b8c90ada3ddf37"],
    [18, base256, "Ki", "97151b4c76945063e2eb0529dc067d97d7bba90776d8126d91f34f3101aea8ba"],
  ];
  for (const [et, base, kind, want] of vectors) {
    it(`${enctype(et).name} ${kind}`, () => assert.equal(hex(enctype(et).deriveKey(base, 2, kind)), want));
  }
});

describe("RFC 3962 enctypes: MIT known-answer decryptions and checksums", () => {
  // [enctype, plaintext, usage, key, ciphertext] from MIT krb5 t_decrypt.c
  const decryptions: Array<[number, string, number, string, string]> = [
    [17, "", 0, "5A5C0F0BA54F3828B2195E66CA24A289", "49FF8E11C173D9583A3254FBE7B1F1DF36C538E8416784A1672E6676"],
    [17, "1", 1, "98450E3F3BAA13F5C99BEB936981B06F", "F86742F537B35DC2174A4DBAA920FAF9042090B065E1EBB1CAD9A65394"],
    [17, "9 bytesss", 2, "9062430C8CDA3388922E6D6A509F5B7A", "68FB9679601F45C78857B2BF820FD6E53ECA8D42FD4B1D7024A09205ABB7CD2EC26C355D2F"],
    [17, "13 bytes byte", 3, "033EE6502C54FD23E27791E987983827", "EC366D0327A933BF49330E650E49BC6B974637FE80BF532FE51795B4809718E6194724DB948D1FD637"],
    [17, "30 bytes bytes bytes bytes byt", 4, "DCEEB70B3DE76562E689226C76429148",
      "C96081032D5D8EEB7E32B4089F789D0FAA481DEA74C0F97CBF3146DDFCF8E800156ECB532FC203E30FF600B63B350939FECE510F02D7FF1E7BAC"],
    [18, "", 0, "17F275F2954F2ED1F90C377BA7F4D6A369AA0136E0BF0C927AD6133C693759A9", "E5094C55EE7B38262E2B044280B069379A95BF95BD8376FB3281B435"],
    [18, "1", 1, "B9477E1FF0329C0050E20CE6C72D2DFF27E8FE541AB0954429A9CB5B4F7B1E2A", "406150B97AEB76D43B36B62CC1ECDFBE6F40E95755E0BEB5C27825F3A4"],
    [18, "9 bytesss", 2, "B1AE4CD8462AFF1677053CC9279AAC30B796FB81CE21474DD3DDBCFEA4EC76D7",
      "09957AA25FCAF88F7B39E4406E633012D5FEA21853F6478DA7065CAEF41FD454A40824EEC5"],
    [18, "13 bytes byte", 3, "E5A72BE9B7926C1225BAFEF9C1872E7BA4CDB2B17893D84ABD90ACDD8764D966",
      "D8F1AAFEEC84587CC3E700A774E56651A6D693E174EC4473B5E6D96F80297A653FB818AD893E719F96"],
    [18, "30 bytes bytes bytes bytes byt", 4, "F1C795E9248A09338D82C3F8D5B567040B0110736845041347235B1404231398",
      "D1137A4D634CFECE924DBC3BF6790648BD5CFF7DE0E7B99460211D0DAEF3D79A295C688858F3B34B9CBD6EEBAE81DAF6B734D4D498B6714F1C1D"],
  ];
  for (const [et, plain, usage, key, ct] of decryptions) {
    it(`${enctype(et).name} decrypts "${plain}" (usage ${usage})`, () => {
      assert.equal(new TextDecoder().decode(enctype(et).decrypt(unhex(key), usage, unhex(ct))), plain);
    });
  }
  // [enctype, data, usage, key, checksum] from MIT krb5 t_cksums.c
  const checksums: Array<[number, string, number, string, string]> = [
    [17, "eight nine ten eleven twelve thirteen", 3, "9062430C8CDA3388922E6D6A509F5B7A", "01A4B088D45628F6946614E3"],
    [18, "fourteen", 4, "B1AE4CD8462AFF1677053CC9279AAC30B796FB81CE21474DD3DDBCFEA4EC76D7", "E08739E3279E2903EC8E3836"],
  ];
  for (const [et, data, usage, key, want] of checksums) {
    it(`${enctype(et).name} checksum of "${data}" (type ${enctype(et).checksumType})`, () => {
      const e = enctype(et);
      assert.equal(hex(e.checksum(unhex(key), usage, utf8(data))), h(want));
      e.verifyChecksum(unhex(key), usage, utf8(data), unhex(want));
      assert.equal(enctypeForChecksum(e.checksumType).id, et);
    });
  }
});

describe("RFC 8009 A: aes128-cts-hmac-sha256-128 and aes256-cts-hmac-sha384-192", () => {
  const salt = new Uint8Array([...unhex("10DF9DD783E5BC8ACEA1730E74355F61"), ...utf8("ATHENA.MIT.EDUraeburn")]);
  it("string-to-key, aes128 (32768 iterations, the default)", () => {
    assert.equal(enctype(19).defaultIterations, 32768);
    assert.equal(hex(enctype(19).stringToKey("password", salt)), h("08 9B CA 48 B1 05 EA 6E A7 7C A5 D2 F3 9D C5 E7"));
  });
  it("string-to-key, aes256 (32768 iterations as s2kparams)", () => {
    assert.equal(hex(enctype(20).stringToKey("password", salt, unhex("00008000"))), h("45 BD 80 6D BF 6A 83 3A 9C FF C1 C9 45 89 A2 22 36 7A 79 BC 21 C4 13 71 89 06 E9 F5 78 A7 84 67"));
  });

  const bk16 = unhex("37 05 D9 60 80 C1 77 28 A0 E8 00 EA B6 E0 D2 3C");
  const bk32 = unhex("6D 40 4D 37 FA F7 9F 9D F0 D3 35 68 D3 20 66 98 00 EB 48 36 47 2E A8 A0 26 D1 6B 71 82 46 0C 52");
  const derived: Array<[number, Uint8Array, "Kc" | "Ke" | "Ki", string]> = [
    [19, bk16, "Kc", "B3 1A 01 8A 48 F5 47 76 F4 03 E9 A3 96 32 5D C3"],
    [19, bk16, "Ke", "9B 19 7D D1 E8 C5 60 9D 6E 67 C3 E3 7C 62 C7 2E"],
    [19, bk16, "Ki", "9F DA 0E 56 AB 2D 85 E1 56 9A 68 86 96 C2 6A 6C"],
    [20, bk32, "Kc", "EF 57 18 BE 86 CC 84 96 3D 8B BB 50 31 E9 F5 C4 BA 41 F2 8F AF 69 E7 3D"],
    [20, bk32, "Ke", "56 AB 22 BE E6 3D 82 D7 BC 52 27 F6 77 3F 8E A7 A5 EB 1C 82 51 60 C3 83 12 98 0C 44 2E 5C 7E 49"],
    [20, bk32, "Ki", "69 B1 65 14 E3 CD 8E 56 B8 20 10 D5 C7 30 12 B6 22 C4 D0 0F FC 23 ED 1F"],
  ];
  for (const [et, base, kind, want] of derived) {
    it(`key derivation: ${enctype(et).name} ${kind} (usage 2)`, () => assert.equal(hex(enctype(et).deriveKey(base, 2, kind)), h(want)));
  }

  // [enctype, base key, confounder, plaintext, ciphertext||MAC], key usage 2
  const encryptions: Array<[number, Uint8Array, string, string, string]> = [
    [19, bk16, "7E 58 95 EA F2 67 24 35 BA D8 17 F5 45 A3 71 48", "", "EF 85 FB 89 0B B8 47 2F 4D AB 20 39 4D CA 78 1D AD 87 7E DA 39 D5 0C 87 0C 0D 5A 0A 8E 48 C7 18"],
    [19, bk16, "7B CA 28 5E 2F D4 13 0F B5 5B 1A 5C 83 BC 5B 24", "00 01 02 03 04 05",
      "84 D7 F3 07 54 ED 98 7B AB 0B F3 50 6B EB 09 CF B5 54 02 CE F7 E6 87 7C E9 9E 24 7E 52 D1 6E D4 42 1D FD F8 97 6C"],
    [19, bk16, "56 AB 21 71 3F F6 2C 0A 14 57 20 0F 6F A9 94 8F", "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F",
      "35 17 D6 40 F5 0D DC 8A D3 62 87 22 B3 56 9D 2A E0 74 93 FA 82 63 25 40 80 EA 65 C1 00 8E 8F C2 95 FB 48 52 E7 D8 3E 1E 7C 48 C3 7E EB E6 B0 D3"],
    [19, bk16, "A7 A4 E2 9A 47 28 CE 10 66 4F B6 4E 49 AD 3F AC", "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11 12 13 14",
      "72 0F 73 B1 8D 98 59 CD 6C CB 43 46 11 5C D3 36 C7 0F 58 ED C0 C4 43 7C 55 73 54 4C 31 C8 13 BC E1 E6 D0 72 C1 86 B3 9A 41 3C 2F 92 CA 9B 83 34 A2 87 FF CB FC"],
    [20, bk32, "F7 64 E9 FA 15 C2 76 47 8B 2C 7D 0C 4E 5F 58 E4", "",
      "41 F5 3F A5 BF E7 02 6D 91 FA F9 BE 95 91 95 A0 58 70 72 73 A9 6A 40 F0 A0 19 60 62 1A C6 12 74 8B 9B BF BE 7E B4 CE 3C"],
    [20, bk32, "B8 0D 32 51 C1 F6 47 14 94 25 6F FE 71 2D 0B 9A", "00 01 02 03 04 05",
      "4E D7 B3 7C 2B CA C8 F7 4F 23 C1 CF 07 E6 2B C7 B7 5F B3 F6 37 B9 F5 59 C7 F6 64 F6 9E AB 7B 60 92 23 75 26 EA 0D 1F 61 CB 20 D6 9D 10 F2"],
    [20, bk32, "53 BF 8A 0D 10 52 65 D4 E2 76 42 86 24 CE 5E 63", "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F",
      "BC 47 FF EC 79 98 EB 91 E8 11 5C F8 D1 9D AC 4B BB E2 E1 63 E8 7D D3 7F 49 BE CA 92 02 77 64 F6 8C F5 1F 14 D7 98 C2 27 3F 35 DF 57 4D 1F 93 2E 40 C4 FF 25 5B 36 A2 66"],
    [20, bk32, "76 3E 65 36 7E 86 4F 02 F5 51 53 C7 E3 B5 8A F1", "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11 12 13 14",
      "40 01 3E 2D F5 8E 87 51 95 7D 28 78 BC D2 D6 FE 10 1C CF D5 56 CB 1E AE 79 DB 3C 3E E8 64 29 F2 B2 A6 02 AC 86 FE F6 EC B6 47 D6 29 5F AE 07 7A 1F EB 51 75 08 D2 C1 6B 41 92 E0 1F 62"],
  ];
  for (const [et, base, conf, plain, want] of encryptions) {
    it(`encryption: ${enctype(et).name}, ${unhex(plain).length}-byte plaintext`, () => {
      const e = enctype(et);
      const ct = e.encrypt(base, 2, unhex(plain), unhex(conf));
      assert.equal(hex(ct), h(want));
      assert.equal(hex(e.decrypt(base, 2, ct)), h(plain));
    });
  }

  const msg = unhex("00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11 12 13 14");
  it("checksum: hmac-sha256-128-aes128 (19)", () => {
    assert.equal(enctype(19).checksumType, 19);
    assert.equal(hex(enctype(19).checksum(bk16, 2, msg)), h("D7 83 67 18 66 43 D6 7B 41 1C BA 91 39 FC 1D EE"));
  });
  it("checksum: hmac-sha384-192-aes256 (20)", () => {
    assert.equal(enctype(20).checksumType, 20);
    assert.equal(hex(enctype(20).checksum(bk32, 2, msg)), h("45 EE 79 15 67 EE FC A3 7F 4A C1 E0 22 2D E8 0D 43 C3 BF A0 66 99 67 2A"));
  });
});

describe("round trips, tampering and refusals", () => {
  for (const et of SUPPORTED_ENCTYPES) {
    const e = enctype(et);
    it(`${e.name}: random keys round-trip plaintexts of 0..70 bytes; the confounder varies`, () => {
      const key = e.randomKey();
      assert.equal(key.length, e.keyLength);
      for (let n = 0; n <= 70; n += 7) {
        const p = Uint8Array.from({ length: n }, (_, i) => i);
        const c1 = e.encrypt(key, 7, p);
        assert.equal(c1.length, 16 + n + e.checksumLength);
        assert.deepEqual(e.decrypt(key, 7, c1), p);
        assert.notDeepEqual(e.encrypt(key, 7, p), c1);
      }
    });
    it(`${e.name}: a flipped bit, a wrong usage, a wrong key or a short ciphertext fail with typed errors`, () => {
      const key = e.randomKey();
      const c = e.encrypt(key, 11, utf8("the authenticator"));
      for (let i = 0; i < c.length; i += 5) {
        const bad = c.slice();
        bad[i] ^= 0x01;
        const err = cryptoFailure(() => e.decrypt(key, 11, bad), KrbCryptoErrorReason.Integrity);
        assert.match(err.message, new RegExp(`${e.name} \\(${et}\\).*key usage 11`));
      }
      cryptoFailure(() => e.decrypt(key, 12, c), KrbCryptoErrorReason.Integrity);
      cryptoFailure(() => e.decrypt(e.randomKey(), 11, c), KrbCryptoErrorReason.Integrity);
      cryptoFailure(() => e.decrypt(key, 11, c.subarray(0, 16 + e.checksumLength - 1)), KrbCryptoErrorReason.BadInput);
      cryptoFailure(() => e.decrypt(new Uint8Array(e.keyLength === 16 ? 32 : 16), 11, c), KrbCryptoErrorReason.BadInput);
      const sum = e.checksum(key, 3, utf8("body"));
      e.verifyChecksum(key, 3, utf8("body"), sum);
      cryptoFailure(() => e.verifyChecksum(key, 3, utf8("Body"), sum), KrbCryptoErrorReason.Integrity);
      cryptoFailure(() => e.verifyChecksum(key, 3, utf8("body"), sum.subarray(1)), KrbCryptoErrorReason.Integrity);
    });
    it(`${e.name}: error messages hold no key or plaintext bytes`, () => {
      const key = e.randomKey();
      const c = e.encrypt(key, 1, utf8("secret-plaintext"));
      c[c.length - 1] ^= 0xff;
      const err = cryptoFailure(() => e.decrypt(key, 1, c), KrbCryptoErrorReason.Integrity);
      const text = `${err.message}\n${err.stack ?? ""}`;
      assert.ok(!text.includes(hex(key)) && !text.includes(hex(key).slice(0, 8)), "key bytes in the message");
      assert.ok(!text.includes("secret-plaintext"));
    });
  }
  it("DES, 3DES, RC4 and Camellia are refused with an error naming the enctype and the alternatives", () => {
    const refused: Array<[number, string]> = [
      [1, "des-cbc-crc"],
      [3, "des-cbc-md5"],
      [16, "des3-cbc-sha1"],
      [23, "rc4-hmac"],
      [24, "rc4-hmac-exp"],
      [25, "camellia128-cts-cmac"],
      [26, "camellia256-cts-cmac"],
    ];
    for (const [n, name] of refused) {
      const err = cryptoFailure(() => enctype(n), KrbCryptoErrorReason.UnsupportedEnctype);
      assert.equal(err.enctype, n);
      assert.ok(err.message.startsWith(`enctype ${name} (${n}) is not supported; use aes256-cts-hmac-sha1-96 (18)`), err.message);
    }
    assert.match(cryptoFailure(() => enctype(99), KrbCryptoErrorReason.UnsupportedEnctype).message, /^enctype 99 is not supported/);
  });
});
