// The personal-data scanner lives below the store now (src/detect), where the write-time detectors use it too.
export { findPersonalData, luhn, mask, type PersonalFinding } from '../../detect/personal-data';
