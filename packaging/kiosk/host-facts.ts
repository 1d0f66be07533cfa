// What the device says about itself at native pairing: platform, model, firmware, manufacturer
// (shown to the owner in a recovery offer) and duid/serial (matched to find its screen again,
// never shown). Read from the OS behind an adapter; Linux reads /etc/machine-id and DMI (x86) or
// the device tree (Raspberry Pi and other ARM boards).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HostFacts } from '../../sdk/contract/native';

export interface HostFactsSource {
  read(): HostFacts;
}

/** Longest value kept from a file (the contract caps model/firmware at 120, duid/serial at 200). */
const MAX = { text: 120, id: 200 };

function readText(root: string, file: string, max: number): string | undefined {
  try {
    // Device-tree strings end in NUL; DMI ones in a newline. Placeholders vendors leave are no facts.
    const text = fs
      .readFileSync(path.join(root, file), 'utf8')
      .replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .trim();
    if (text === '' || /^(to be filled by o\.e\.m\.|default string|none|not specified|0+)$/i.test(text))
      return undefined;
    return text.slice(0, max);
  } catch {
    return undefined;
  }
}

function osRelease(root: string): string | undefined {
  const text = readText(root, 'etc/os-release', 4096);
  const line = text?.match(/PRETTY_NAME="?([^"\n]+)"?/);
  return line?.[1]?.trim().slice(0, MAX.text);
}

/** Linux host facts under `root` (`/` on a device; a fixture directory in tests). */
export function linuxHostFacts(root = '/', arch: string = os.arch()): HostFactsSource {
  return {
    read() {
      const model =
        readText(root, 'proc/device-tree/model', MAX.text) ?? readText(root, 'sys/class/dmi/id/product_name', MAX.text);
      const manufacturer = readText(root, 'sys/class/dmi/id/sys_vendor', MAX.text);
      const serial =
        readText(root, 'proc/device-tree/serial-number', MAX.id) ??
        readText(root, 'sys/class/dmi/id/product_serial', MAX.id);
      const facts: HostFacts = { platform: `linux-${arch}` };
      const firmware = osRelease(root) ?? readText(root, 'sys/class/dmi/id/bios_version', MAX.text);
      const duid = readText(root, 'etc/machine-id', MAX.id);
      if (model) facts.model = model;
      if (firmware) facts.firmware = firmware;
      if (manufacturer) facts.manufacturer = manufacturer;
      else if (model?.startsWith('Raspberry Pi')) facts.manufacturer = 'Raspberry Pi Ltd';
      if (duid) facts.duid = duid;
      if (serial) facts.serial = serial;
      return facts;
    },
  };
}

/** Fixed facts (tests, and platforms without an adapter yet). */
export function fixedHostFacts(facts: HostFacts): HostFactsSource {
  return { read: () => ({ ...facts }) };
}
